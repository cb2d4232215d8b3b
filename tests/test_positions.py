"""The shared position parser and the encoder refuse what no game reaches and the planes cannot hold."""

import chess
import pytest

from analysis.encoding import pack
from analysis.encoding.lc0_planes import MAX_RULE50
from analysis.positions import MAX_FULLMOVE_NUMBER, MAX_HALFMOVE_CLOCK, board_from_fen

KINGS_AND_PAWN = "4k3/8/8/8/8/8/4P3/4K3 w - - {clock} 200"


@pytest.mark.parametrize("clock", [MAX_HALFMOVE_CLOCK + 1, 65_535, 65_536, 10 ** 9])
def test_a_half_move_clock_over_the_75_move_rule_is_refused(clock):
    with pytest.raises(ValueError, match=f"half-move clock {clock} .* is over 150: the 75-move rule"):
        board_from_fen(KINGS_AND_PAWN.format(clock=clock))


def test_the_largest_reachable_clock_is_accepted_and_encoded():
    board = board_from_fen(KINGS_AND_PAWN.format(clock=MAX_HALFMOVE_CLOCK))
    assert pack(board).rule50 == MAX_HALFMOVE_CLOCK


def test_the_encoder_refuses_a_clock_its_key_cannot_hold():
    # Boards built past the parser (a long game of shuffling, or code setting the clock)
    # get a clear error instead of an OverflowError deep in the cache key.
    board = chess.Board(KINGS_AND_PAWN.format(clock=0))
    board.halfmove_clock = MAX_RULE50
    assert len(pack(board).key()) == 112 * 8 + 2
    board.halfmove_clock = MAX_RULE50 + 1
    with pytest.raises(ValueError, match="half-move clock 65536 is outside 0..65535"):
        pack(board)


@pytest.mark.parametrize("number", [1, MAX_FULLMOVE_NUMBER])
def test_move_numbers_from_1_to_the_bound_are_accepted(number):
    assert board_from_fen(KINGS_AND_PAWN.replace("200", str(number)).format(clock=0)).fullmove_number == number


@pytest.mark.parametrize("written, message", [
    ("0", "the move number 0 in FEN .* moves count from 1"),
    ("000", "the move number 0 in FEN"),
    (str(MAX_FULLMOVE_NUMBER + 1), "the move number 10,001 in FEN .* is over 10,000"),
    (str(10 ** 30), "the move number of 31 digits in FEN .* is over 10,000"),
    ("-1", "invalid FEN .*: fullmove number cannot be negative"),
])
def test_move_numbers_outside_the_bounds_are_refused(written, message):
    with pytest.raises(ValueError, match=message):
        board_from_fen(KINGS_AND_PAWN.replace("200", written).format(clock=0))


def test_a_refused_fen_is_cut_in_its_message():
    fen = KINGS_AND_PAWN.replace("200", "9" * 5000).format(clock=0)
    with pytest.raises(ValueError) as refused:
        board_from_fen(fen)
    assert len(str(refused.value)) < 300 and "..." in str(refused.value)
