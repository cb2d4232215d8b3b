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


GAMES_PGN = """[Result "1-0"]

1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0

[Result "1/2-1/2"]

1. d4 d5 2. c4 e6 1/2-1/2

[Result "0-1"]

1. f3 e5 2. g4 Qh4# 0-1
"""


def test_the_held_out_games_are_the_decisive_ones_of_the_corpus_test_split(tmp_path):
    from analysis.corpus.masters import master_games
    from analysis.data.plan import game_split
    from analysis.eval.value_swing import held_out_decisive_games

    pgn = tmp_path / "three.pgn"
    pgn.write_text(GAMES_PGN)
    games = held_out_decisive_games([pgn], test_share=0.999999, seed=0)
    assert [game_id for game_id, _ in games] == ["master:three:0", "master:three:2"]  # not the draw
    ids = {game.game_id for game in master_games([pgn])}  # the corpus builder's own ids
    assert {game_id for game_id, _ in games} <= ids
    assert [len(boards) for _, boards in games] == [8, 5] and games[1][1][-1].is_checkmate()
    assert held_out_decisive_games([pgn], test_share=0.0, seed=0) == []
    chosen = held_out_decisive_games([pgn], test_share=0.5, seed=3)
    assert [g for g, _ in chosen] == [g for g in ("master:three:0", "master:three:2") if game_split(g, 0.5, 3) == "test"]


@pytest.mark.parametrize("bias", [0.0, 0.04])
def test_the_swing_over_games_is_the_mean_of_each_games_with_an_interval(bias):
    from analysis.eval.value_swing import games_swing

    games = [("opera", game_boards(OPERA_GAME)), ("mate", game_boards(GAMES_PGN))]
    result = games_swing(ScoreEvaluator(lambda board: 0.5 + bias), games)
    assert result["games"] == 2 and result["positions"] == 34 + 8
    assert [row["network"] for row in result["per_game"]] == pytest.approx([2 * bias] * 2, abs=1e-4)
    assert result["network"]["mean"] == pytest.approx(2 * bias, abs=1e-4)
    assert result["network"]["ci95"] == pytest.approx([2 * bias] * 2, abs=1e-4)
    assert "stockfish" not in result
    with pytest.raises(ValueError, match="no games"):
        games_swing(ScoreEvaluator(material_score), [])


def test_the_difference_is_paired_game_by_game_with_stockfish():
    from analysis.eval.value_swing import games_swing
    from tests.conftest import require_stockfish

    path = require_stockfish()
    games = [("opera", game_boards(OPERA_GAME)), ("mate", game_boards(GAMES_PGN))]
    result = games_swing(ScoreEvaluator(material_score), games, stockfish_nodes=2000, stockfish=path)
    rows = result["per_game"]
    assert rows[0]["network"] == pytest.approx(-0.0723, abs=1e-4)  # as on the Opera game alone
    assert result["stockfish"]["nodes"] == 2000
    assert result["difference"]["mean"] == pytest.approx(
        sum(r["network"] - r["stockfish"] for r in rows) / 2, abs=1e-4)


def test_the_corpus_test_games_from_the_command_line(monkeypatch, capsys):
    import json

    import analysis.checkpoint
    from analysis.data.plan import game_split
    from tests.conftest import require_shared_data

    require_shared_data("pgn")
    monkeypatch.setattr(analysis.checkpoint, "load_evaluator", lambda path, device: ScoreEvaluator(material_score))
    assert main(["--model", "material", "--test-games", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["games"] >= 20 and result["network"]["ci95"] is not None
    assert all(game_split(row["game"], 0.05, 0) == "test" for row in result["per_game"])
    with pytest.raises(SystemExit):  # one game or the test games, not both
        main(["--model", "material", "--test-games", "--pgn", "game.pgn"])
