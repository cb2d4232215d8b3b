"""The side-to-move swing (analysis.eval.value_swing): a value that adds b for the mover swings by 2b,
a value in White's view that ignores the mover does not swing, and bad input exits with status 2."""

from __future__ import annotations

import chess
import pytest

from analysis.eval.value_swing import OPERA_GAME, game_boards, main, swing, value_swing
from tests.value_evaluators import ScoreEvaluator, material_score


def test_the_opera_game_is_read_whole():
    boards = game_boards(OPERA_GAME)
    assert len(boards) == 34 and boards[0] == chess.Board() and boards[-1].is_checkmate()
    assert len(boards[-1].move_stack) == 33  # history kept, for the lc0 planes


@pytest.mark.parametrize("bias", [0.0, 0.03, -0.05])
def test_a_bias_for_the_mover_swings_by_twice_the_bias(bias):
    boards = game_boards(OPERA_GAME)
    result = value_swing(ScoreEvaluator(lambda board: 0.5 + bias), boards)
    assert result["swing"] == pytest.approx(2 * bias, abs=1e-4)


def test_a_value_blind_to_the_mover_still_shows_the_games_own_difference():
    # Material favours nobody for being to move, yet on the Opera game it swings by -0.072: Morphy's
    # sacrifices leave White a piece down on Black's plies. The figure is read beside a reference's.
    boards = game_boards(OPERA_GAME)
    white = [material_score(b) if b.turn else 1 - material_score(b) for b in boards]
    result = value_swing(ScoreEvaluator(material_score), boards)
    assert result["white_scores"] == pytest.approx(white, abs=1e-4)
    assert result["swing"] == pytest.approx(swing(white, [b.turn for b in boards]), abs=1e-4)
    assert result["swing"] == pytest.approx(-0.0723, abs=1e-4)


def test_bad_input_is_a_clean_error(tmp_path, capsys):
    pgn = tmp_path / "one.pgn"
    pgn.write_text("1. e4 *\n")
    assert main(["--model", "weights/cf-shaw.safetensors", "--pgn", str(pgn)]) == 2
    assert "at least two moves" in capsys.readouterr().err
    assert main(["--model", str(tmp_path / "missing.safetensors")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_stockfish_is_the_reference_and_barely_swings():
    from analysis.eval.value_swing import stockfish_swing
    from tests.conftest import require_stockfish

    path = require_stockfish()
    reference = stockfish_swing(game_boards(OPERA_GAME), 20000, stockfish=path)
    assert reference["nodes"] == 20000 and abs(reference["swing"]) < 0.03
