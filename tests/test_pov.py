"""analysis.pov: the one conversion from the side to move's values to White's."""

import chess

from analysis.pov import bound_for_white, mate_for_white, score_for_white, wdl_for_white, white_to_move


def test_white_to_move_reads_the_fen():
    board = chess.Board()
    assert white_to_move(board.fen())
    board.push_uci("e2e4")
    assert not white_to_move(board.fen())


def test_whites_values_stay_and_blacks_turn_round():
    assert score_for_white(0.3, True) == 0.3 and score_for_white(0.3, False) == 1.0 - 0.3
    assert wdl_for_white([0.5, 0.3, 0.2], True) == [0.5, 0.3, 0.2]
    assert wdl_for_white((0.5, 0.3, 0.2), False) == [0.2, 0.3, 0.5]
    assert mate_for_white(3, True) == 3 and mate_for_white(3, False) == -3 and mate_for_white(-2, False) == 2
    assert bound_for_white("upper", False) == "lower" and bound_for_white("lower", False) == "upper"
    assert bound_for_white("upper", True) == "upper" and bound_for_white("exact", False) == "exact"


def test_nothing_stays_nothing():
    for convert in (score_for_white, wdl_for_white, mate_for_white):
        assert convert(None, False) is None and convert(None, True) is None


def test_the_same_number_the_page_computed():
    # The page took 1 - v itself before; the conversion gives the same double, so no digit shown moves.
    for v in (0.12345, 0.5, 0.99999, 0.0, 1.0, 0.1235):
        assert score_for_white(v, False) == 1 - v
