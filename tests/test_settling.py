"""The settling depth over puzzles (analysis.eval.settling): the report's arithmetic on known
timelines, and a real network's figures agree with the logit lens position by position."""

from __future__ import annotations

import pytest

from analysis.eval.settling import first_positions, main, settling_points, settling_report
from tests.conftest import require_shared_data


def test_the_report_counts_fractions_of_the_way_through():
    timelines = [{"final": "e2e4", "final_from": 0}, {"final": "d2d4", "final_from": 4},
                 {"final": "g1f3", "final_from": 2}, {"why": "the game is over here: no move to settle on"}]
    report = settling_report(timelines, ["e2e4", "e2e4", "g1f3", "a2a3"], points=5)
    assert report["all"]["n"] == 3 and report["all"]["mean"] == pytest.approx((0 + 1 + 0.5) / 3, abs=1e-4)
    assert report["final_is_solution"]["mean"] == pytest.approx(0.25, abs=1e-4)
    assert report["final_is_not_solution"]["n"] == 1 and report["final_is_not_solution"]["ci95"] is None
    assert report["settled_at_output_only"] == pytest.approx(1 / 3, abs=1e-4)
    low, high = report["all"]["ci95"]
    assert 0 <= low <= report["all"]["mean"] <= high <= 1


def test_a_real_network_settles_where_its_logit_lens_says():
    from analysis.checkpoint import load_evaluator
    from analysis.eval.puzzles import load_puzzles
    from analysis.lens import core, lens_for

    puzzles = load_puzzles(require_shared_data() / "puzzles" / "lichess_puzzles_1000.csv", limit=6)
    evaluator = load_evaluator("weights/cf-shaw.safetensors", device="cpu")
    boards = [b for b, _ in first_positions(puzzles)]
    timelines, points = settling_points(evaluator, boards)
    assert points == 13 and len(timelines) == 6
    for board, timeline in zip(boards, timelines):
        view = core.logit_lens(lens_for(evaluator.model, evaluator.encoding), board)
        assert timeline["final_from"] == view.settles(timeline["final"])


def test_bad_input_is_a_clean_error(tmp_path, capsys):
    bad = tmp_path / "p.csv"
    bad.write_text("PuzzleId,FEN\nx,8/8/8/8/8/8/8/8 w - - 0 1\n")
    assert main(["--model", "weights/cf-shaw.safetensors", "--csv", str(bad)]) == 2
    assert "missing column" in capsys.readouterr().err
    puzzles = str(require_shared_data() / "puzzles" / "lichess_puzzles_1000.csv")
    assert main(["--model", "weights/giraffe.safetensors", "--csv", puzzles, "--limit", "2"]) == 2
    assert "no decision timeline" in capsys.readouterr().err  # one readout point: nothing to settle
