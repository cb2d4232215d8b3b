"""Value quality on hand-made cases whose answers are known, and the value-quality command's contract."""

from __future__ import annotations

import json

import chess
import chess.pgn
import io
import numpy as np
import pyarrow as pa
import pytest

from analysis.cli import main
from analysis.data.sources import from_board
from analysis.data.store import shard_path, write_table_atomic
from analysis.eval.value_quality import (ValueSamples, calibration_bins, expected_calibration_error,
                                         load_value_samples, predict_scores, value_figures, value_quality)
from tests.value_evaluators import ScoreEvaluator, material_score

OPERA = """1. e4 e5 2. Nf3 d6 3. d4 Bg4 4. dxe5 Bxf3 5. Qxf3 dxe5 6. Bc4 Nf6 7. Qb3 Qe7 8. Nc3 c6
9. Bg5 b5 10. Nxb5 cxb5 11. Bxb5+ Nbd7 12. O-O-O Rd8 13. Rxd7 Rxd7 14. Rd1 Qe6 15. Bxd7+ Nxd7
16. Qb8+ Nxb8 17. Rd8# 1-0"""
BIAS = 0.05


def opera_boards() -> list[chess.Board]:
    """Every position of the Opera game before mate (with its move history), 16 of each colour to move."""
    game = chess.pgn.read_game(io.StringIO(OPERA))
    board, boards = game.board(), []
    for move in list(game.mainline_moves())[:-1]:
        board.push(move)
        boards.append(board.copy(stack=True))
    return boards[:32]


def samples(pred_minus: float = BIAS) -> tuple[ValueSamples, np.ndarray]:
    """Targets = material score - ``pred_minus``; sources alternate in pairs (pgn, pgn, perturb, perturb)."""
    boards = opera_boards()
    pred = np.asarray([material_score(b) for b in boards])
    sources = ["pgn" if (i // 2) % 2 == 0 else "perturb" for i in range(len(boards))]
    return ValueSamples(boards, pred - pred_minus, sources), pred


def test_constant_bias_for_the_mover_is_exactly_the_side_to_move_bias():
    data, _ = samples()
    pred = predict_scores(ScoreEvaluator(material_score), data.boards, batch=5)  # several batches
    report = value_quality(pred, data)
    for figures in [report["overall"], *report["by_source"].values()]:
        assert figures["mae"] == pytest.approx(BIAS)
        assert figures["brier"] == pytest.approx(BIAS ** 2)
        assert figures["signed_error_white_view"]["white_to_move"] == pytest.approx(BIAS)
        assert figures["signed_error_white_view"]["black_to_move"] == pytest.approx(-BIAS)
        assert figures["side_to_move_bias"] == pytest.approx(BIAS)
        assert figures["white_bias"] == pytest.approx(0.0, abs=1e-12)
    assert report["overall"]["positions"] == 32 and report["overall"]["white_to_move"] == 16
    assert set(report["by_source"]) == {"pgn", "perturb"}


def test_a_bias_towards_white_is_not_a_side_to_move_bias():
    data, pred = samples(pred_minus=0.0)
    white = data.white_to_move
    towards_white = np.where(white, pred + 0.03, pred - 0.03)
    figures = value_figures(towards_white, data.target, white)
    assert figures["white_bias"] == pytest.approx(0.03)
    assert figures["side_to_move_bias"] == pytest.approx(0.0, abs=1e-12)


def test_hedging_cancels_overall_but_shows_per_source():
    """Over-rate the mover on game positions, under-rate it after random moves: overall bias 0."""
    data, pred = samples(pred_minus=0.0)
    sources = np.asarray(data.sources)
    hedged = np.where(sources == "pgn", pred + 0.1, pred - 0.1)
    report = value_quality(hedged, data)
    assert report["overall"]["side_to_move_bias"] == pytest.approx(0.0, abs=1e-12)
    assert report["by_source"]["pgn"]["side_to_move_bias"] == pytest.approx(0.1)
    assert report["by_source"]["perturb"]["side_to_move_bias"] == pytest.approx(-0.1)
    assert report["overall"]["mae"] == pytest.approx(0.1)


def test_calibrated_but_noisy_predictions_have_zero_ece_and_nonzero_mae():
    pred = np.repeat(np.linspace(0.05, 0.95, 10), 4)  # 4 predictions in the middle of every bin
    target = pred + np.tile([0.04, -0.04, 0.02, -0.02], 10)  # right on average in every bin
    bins = calibration_bins(pred, target)
    assert [b["count"] for b in bins] == [4] * 10
    assert expected_calibration_error(bins) == pytest.approx(0.0, abs=1e-12)
    figures = value_figures(pred, target, np.ones(40, bool))
    assert figures["ece"] == pytest.approx(0.0, abs=1e-12) and figures["mae"] == pytest.approx(0.03)
    assert figures["side_to_move_bias"] is None  # no Black-to-move positions: undefined, not 0
    assert figures["signed_error_white_view"]["black_to_move"] is None


def test_calibration_bins_and_ece_by_hand():
    pred = np.asarray([0.0, 0.05, 0.15, 1.0, 1.0])
    target = np.asarray([0.1, 0.1, 0.35, 0.5, 0.7])
    bins = calibration_bins(pred, target)
    assert (bins[0]["count"], bins[1]["count"], bins[9]["count"]) == (2, 1, 2)  # 1.0 is in the last bin
    assert bins[5]["count"] == 0 and bins[5]["mean_predicted"] is None
    # |0.025 - 0.1| * 2/5 + |0.15 - 0.35| * 1/5 + |1.0 - 0.6| * 2/5
    assert expected_calibration_error(bins) == pytest.approx(0.075 * 0.4 + 0.2 * 0.2 + 0.4 * 0.4)


# -- the command ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """A hand-made annotated dataset: the Opera game (test, win = material - BIAS) plus train rows."""
    root = tmp_path_factory.mktemp("value-data")
    data, _ = samples()
    rows = []
    for board, win, source in zip(data.boards, data.target, data.sources):
        row = from_board(board, "opera", source).__dict__
        rows.append({**row, "split": "test", "win": float(win)})
    rows += [{**rows[0], "split": "train", "win": 0.99}] * 3  # must not be read as test rows
    write_table_atomic(pa.Table.from_pylist(rows), shard_path(root, 0))
    return root


def run_cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_loaded_rows_keep_their_history(dataset):
    loaded = load_value_samples(dataset)
    assert len(loaded.boards) == 32 and len(loaded.boards[-1].move_stack) == 7
    assert loaded.boards[-1].fen() == opera_boards()[-1].fen()
    assert len(load_value_samples(dataset, "train").boards) == 3


def test_cli_json_contract(dataset, capsys, tmp_path):
    plot = tmp_path / "plots" / "reliability.png"
    code, out, _ = run_cli(capsys, "value-quality", "--model", "material", "--data", str(dataset), "--json",
                           "--plot", str(plot))
    assert code == 0
    payload = json.loads(out)
    assert set(payload) == {"model", "algo", "nodes", "data", "split", "positions", "overall", "by_source", "plot"}
    assert payload["positions"] == 32 and payload["split"] == "test" and payload["plot"] == str(plot)
    overall = payload["overall"]
    assert set(overall) == {"positions", "white_to_move", "mae", "brier", "ece", "mean_predicted", "mean_target",
                            "signed_error_white_view", "side_to_move_bias", "white_bias", "calibration"}
    assert overall["side_to_move_bias"] == pytest.approx(BIAS, abs=1e-6)  # float32 storage of win
    assert overall["mae"] == pytest.approx(BIAS, abs=1e-6)
    assert len(overall["calibration"]) == 10 and sum(b["count"] for b in overall["calibration"]) == 32
    assert set(payload["by_source"]) == {"pgn", "perturb"}
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_text_output_and_limit(dataset, capsys):
    code, out, _ = run_cli(capsys, "value-quality", "--model", "material", "--data", str(dataset), "--limit", "8")
    assert code == 0
    assert "value quality on 8 test positions" in out and "+0.0500" in out


def test_cli_scores_an_agent_by_its_search_root_score(dataset, capsys, tiny_checkpoint):
    from analysis.checkpoint import load_evaluator
    from analysis.search import make_search

    code, out, _ = run_cli(capsys, "value-quality", "--model", str(tiny_checkpoint), "--data", str(dataset),
                           "--algo", "value", "--limit", "6", "--json")
    payload = json.loads(out)
    assert code == 0 and payload["algo"] == "value" and payload["positions"] == 6
    boards = load_value_samples(dataset, limit=6).boards
    search = make_search("value", load_evaluator(tiny_checkpoint, device="cpu"))
    expected = np.array([search.run(b).score for b in boards])
    network = np.array([e.score for e in load_evaluator(tiny_checkpoint, device="cpu").evaluate(boards)])
    target = load_value_samples(dataset, limit=6).target
    assert payload["overall"]["mae"] == pytest.approx(float(np.abs(expected - target).mean()), abs=1e-6)
    assert not np.allclose(expected, network)  # the agent's score is its search's, not the network's


@pytest.mark.parametrize("args, message", [
    (["--algo", "nosuch"], "unknown search 'nosuch'"),
    (["--nodes", "5"], "--nodes needs --algo"),
    (["--data", "{missing}"], "no annotated shards"),
    (["--model", "{missing}.safetensors"], "model checkpoint not found"),
    (["--model", "{notckpt}"], "damaged safetensors header"),
    (["--limit", "0"], "--limit must be a positive"),
    (["--split", "train", "--data", "{empty}"], "no annotated train positions"),
])
def test_cli_bad_input_exits_2_with_one_line(dataset, capsys, tmp_path, args, message):
    notckpt = tmp_path / "x.safetensors"
    notckpt.write_bytes(b"\x00" * 64)
    empty = tmp_path / "empty"
    write_table_atomic(pa.Table.from_pylist([{"fen": chess.STARTING_FEN, "history_fen": chess.STARTING_FEN,
                                              "history_moves": "", "game_id": "g", "ply": 0, "source": "pgn",
                                              "split": "test", "win": 0.5}]), shard_path(empty, 0))
    names = {"missing": str(tmp_path / "missing"), "notckpt": str(notckpt), "empty": str(empty)}
    base = {"--model": "material", "--data": str(dataset)}
    extra = [a.format(**names) for a in args]
    for flag in ("--model", "--data"):
        if flag in extra:
            base.pop(flag)
    argv = ["value-quality"] + [x for kv in base.items() for x in kv] + extra
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1
