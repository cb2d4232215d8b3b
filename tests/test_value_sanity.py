"""The value sanity suite: each check passes a sane evaluator and fails the fault it is there for."""

from __future__ import annotations

import json
import shutil

import chess
import pytest

from analysis.cli import main
from analysis.eval.value_sanity import SUITE_VERSION, mirrored, run_sanity
from tests.value_evaluators import ScoreEvaluator, material_score, sane_evaluator, sane_score


def failing(result: dict) -> set[str]:
    return {c["name"] for c in result["checks"] if not c["passed"]}


def names(result: dict, prefix: str) -> set[str]:
    return {c["name"] for c in result["checks"] if c["name"].startswith(prefix)}


def test_result_shape():
    result = run_sanity(sane_evaluator())
    assert set(result) == {"passed", "checks", "suite_version"} and result["suite_version"] == SUITE_VERSION == 1
    for check in result["checks"]:
        assert set(check) == {"name", "passed", "detail"}
        assert isinstance(check["name"], str) and isinstance(check["passed"], bool) and check["detail"]
    assert len({c["name"] for c in result["checks"]}) == len(result["checks"])  # names are unique
    json.dumps(result)  # JSON-ready as it is


def test_a_sane_evaluator_passes_every_check():
    result = run_sanity(sane_evaluator())
    assert result["passed"], failing(result)
    kinds = {c["name"].split(":")[0] for c in result["checks"]}
    assert {"start position", "quiet opening", "mirrored", "history", "mate in 1", "checkmated",
            "stalemated"} <= kinds


def test_over_rating_the_mover_fails_the_start_and_the_openings_only():
    result = run_sanity(sane_evaluator(lambda board: 0.2))
    assert failing(result) == {"start position"} | names(result, "quiet opening")
    assert not result["passed"]


def test_favouring_white_fails_the_mirror_checks_only():
    result = run_sanity(sane_evaluator(lambda board: 0.08 if board.turn == chess.WHITE else -0.08))
    assert failing(result) == names(result, "mirrored") and names(result, "mirrored")


def test_a_value_that_moves_with_history_fails_the_history_checks():
    result = run_sanity(sane_evaluator(lambda board: 0.12 if board.move_stack else 0.0))
    assert names(result, "history") <= failing(result)
    assert not failing(result) & names(result, "mirrored")  # both mirrored forms carry the same history


def test_a_mate_blind_evaluator_fails_the_equal_material_mates():
    result = run_sanity(ScoreEvaluator(material_score))
    assert failing(result) == {"mate in 1: Scholar's mate, White to play Qxf7#",
                               "mate in 1: Fool's mate, Black to play Qh4#"}


def test_finished_positions_are_judged_by_the_searches_not_the_raw_value():
    """A network's raw value on a finished position is noise; every search must answer from the rules."""
    nonsense = ScoreEvaluator(lambda board: 0.9 if board.is_game_over() else sane_score(board))
    result = run_sanity(nonsense)
    finished = [c for c in result["checks"] if c["name"].startswith(("checkmated", "stalemated"))]
    assert len(finished) == 4 and all(c["passed"] for c in finished)
    assert all("network's raw value 0.900, not judged" in c["detail"] for c in finished)


def test_mirrored_keeps_the_history_with_colours_swapped():
    board = chess.Board()
    for uci in "e2e4 c7c5 g1f3".split():
        board.push_uci(uci)
    swapped = mirrored(board)
    assert [m.uci() for m in swapped.move_stack] == ["e7e5", "c2c4", "g8f6"]
    assert swapped.board_fen() == board.mirror().board_fen() and swapped.turn == chess.WHITE


# -- the command ---------------------------------------------------------------------------------


def run_cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_exit_status_1_and_json_when_a_check_fails(capsys, tiny_checkpoint):
    code, out, _ = run_cli(capsys, "value-sanity", "--model", "material", "--json")
    assert code == 1
    result = json.loads(out)
    assert result == run_sanity(ScoreEvaluator(material_score))  # the material evaluator's scores
    assert result["passed"] is False and set(result) == {"passed", "checks", "suite_version"}
    code, out, _ = run_cli(capsys, "value-sanity", "--model", str(tiny_checkpoint), "--device", "cpu")
    assert code == 1 and "value sanity FAILED" in out  # random weights


def test_cli_exit_status_0_when_every_check_passes(capsys, monkeypatch):
    import analysis.cli.value_cmds as value_cmds

    monkeypatch.setattr(value_cmds, "_evaluator", lambda model, device, threads: sane_evaluator())
    code, out, _ = run_cli(capsys, "value-sanity", "--model", "sane")
    assert code == 0 and "value sanity passed" in out and "FAIL " not in out


def test_cli_bad_model_exits_2(capsys, tmp_path):
    code, out, err = run_cli(capsys, "value-sanity", "--model", str(tmp_path / "nope.safetensors"))
    assert code == 2 and out == "" and "model checkpoint not found" in err


def test_result_attached_to_a_checkpoint_shows_in_the_report(capsys, tmp_path, tiny_checkpoint):
    from analysis.checkpoint import read_header

    model = tmp_path / "net.safetensors"
    shutil.copy(tiny_checkpoint, model)
    code, out, _ = run_cli(capsys, "value-sanity", "--model", str(model), "--device", "cpu", "--json")
    assert code == 1
    (tmp_path / "sanity.json").write_text(out)
    assert run_cli(capsys, "attach-metrics", "--model", str(model),
                   "--result", f"value_sanity={tmp_path / 'sanity.json'}")[0] == 0
    stored = read_header(model)[0].metrics["value_sanity"]
    assert stored == json.loads(out)
    code, report, _ = run_cli(capsys, "report", "--model", str(model))
    assert code == 0 and "Value sanity suite (version 1): FAILED" in report
    failed = [c for c in stored["checks"] if not c["passed"]]
    assert f"{len(stored['checks']) - len(failed)}/{len(stored['checks'])} checks passed" in report
    assert all(f"- failed: {c['name']}: {c['detail']}" in report for c in failed)
    assert "Value quality: not measured" in report


def test_value_quality_renders_in_the_card(tmp_path):
    from analysis.eval.report import render_markdown

    figures = {"positions": 10, "mae": 0.1234, "brier": 0.0321, "ece": 0.0456,
               "signed_error_white_view": {"white_to_move": 0.08, "black_to_move": -0.04},
               "side_to_move_bias": 0.06}
    vq = {"split": "test", "data": "datasets/sf-v2", "overall": figures, "by_source": {"perturb": figures}}
    text = render_markdown({"value_quality": vq, "value_sanity": {"passed": True, "suite_version": 1,
                                                                   "checks": [{"name": "a", "passed": True,
                                                                               "detail": "x"}]}})
    assert "| network | all | 10 | 0.123 | 0.0321 | 0.046 | +0.080 | -0.040 | +0.060 |" in text
    assert "| network | perturb | 10 |" in text and "material baseline" not in text
    assert "Value sanity suite (version 1): passed, 1/1 checks passed." in text
