"""ChessBench's FEN tokens and 1968 actions against the reference's vectors (research notes, section 1)."""

import random

import chess
import numpy as np
import pytest

from analysis.encoding import get_encoding
from analysis.encoding.chessbench import NAME, encode_fens, fen_string
from analysis.encoding.chessbench_actions import (NUM_ACTIONS, action_to_move, actions, legal_actions,
                                                  move_to_action)

START_VECTOR = ([29, 20, 19, 11, 22, 21, 11, 19, 20] + [18] * 8 + [30] * 32 + [23] * 8
                + [26, 25, 24, 27, 28, 24, 25, 26] + [28, 27, 21, 22] + [30, 30] + [0, 30, 30] + [1, 30, 30])


def test_start_position_vector():
    tokens = get_encoding(NAME).encode([chess.Board()])
    assert tokens.shape == (1, 77) and tokens.dtype == np.int64
    assert tokens[0].tolist() == START_VECTOR


def test_fields_are_padded_and_the_board_never_flipped():
    board = chess.Board("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 57")  # en passant legal: exd6
    text = fen_string(board.fen())
    assert text[0] == "w" and text[1:9] == "....k..." and text[65:69] == "...." and text[69:71] == "d6"
    assert text[71:74] == "0.." and text[74:77] == "57."
    black = chess.Board("4k3/8/8/8/8/8/8/4K3 b - - 12 100")
    text = fen_string(black.fen())
    assert text[0] == "b" and text[1:9] == "....k..." and text[57:65] == "....K..."  # rank 8 first, unflipped
    assert text[71:] == "12.100"


def test_fen_is_normalised_by_python_chess():
    # A FEN naming an en-passant square where no capture is legal: python-chess drops it.
    board = chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1")
    assert fen_string(board.fen())[69:71] == ".."


def test_bad_fens_are_refused():
    with pytest.raises(ValueError, match="counters above 999"):
        encode_fens(["4k3/8/8/8/8/8/8/4K3 w - - 0 1000"])
    with pytest.raises(ValueError, match="six-field"):
        encode_fens(["4k3/8/8/8/8/8/8/4K3 w - -"])
    with pytest.raises(ValueError, match="vocabulary"):
        encode_fens(["4k3/8/8/8/8/8/8/4K3 w A - 0 1"])  # Shredder castling


@pytest.mark.parametrize("index,uci", [(0, "a1b1"), (102, "e1g1"), (317, "e2e4"), (1399, "a7a8"),
                                       (1792, "a2a1q"), (1880, "a7a8q"), (1967, "h7g8n")])
def test_action_anchors(index, uci):
    assert actions()[index] == uci
    assert move_to_action(chess.Move.from_uci(uci)) == index and action_to_move(index).uci() == uci


def test_table_size_and_uniqueness():
    assert len(actions()) == len(set(actions())) == NUM_ACTIONS == 1968
    assert actions().index("a1b1") < actions().index("a1a2")  # generated, not sorted


def test_every_legal_move_has_an_action_in_ascending_order():
    rng = random.Random(0)
    for _ in range(20):
        board = chess.Board()
        for _ in range(rng.randrange(1, 120)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        moves, indices = legal_actions(board)
        assert sorted(moves, key=lambda m: m.uci()) == sorted(board.legal_moves, key=lambda m: m.uci())
        assert indices.tolist() == sorted(indices.tolist())
        assert [actions()[i] for i in indices] == [m.uci() for m in moves]


def test_square_tokens_are_real_squares():
    encoding = get_encoding(NAME)
    board = chess.Board()
    tokens = encoding.encode([board])[0]
    order = encoding.square_tokens(board)
    assert tokens[order[chess.E1]] == 28 and tokens[order[chess.D8]] == 22 and tokens[order[chess.A2]] == 23
    assert encoding.position_key(board) == board.fen().encode()
