"""``python -m analysis init|describe|evaluate`` as a user runs them."""

import contextlib
import io
import json
import subprocess
import sys

import chess
import pytest

from tests.conftest import ROOT


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "analysis", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "tiny.safetensors"
    result = run("init", "--family", "chessformer", "--preset", "cf-tiny", "--out", str(path), "--seed", "3")
    assert result.returncode == 0, result.stderr
    assert "untrained" in result.stdout
    return path


def test_describe(checkpoint):
    result = run("describe", "--model", str(checkpoint), "--json")
    info = json.loads(result.stdout)
    assert info["family"] == "chessformer" and info["trained"] is False
    assert info["config"]["layers"] == 2 and info["parameters"] < 100_000
    assert info["provenance"]["seed"] == 3
    text = run("describe", "--model", str(checkpoint)).stdout
    assert "UNTRAINED" in text and "parameters" in text


def test_evaluate_json_contract_with_history(checkpoint):
    result = run("evaluate", "--model", str(checkpoint), "--fen", chess.STARTING_FEN,
                 "--moves", "e2e4", "e7e5", "g1f3", "--attention", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    board = chess.Board()
    for uci in ("e2e4", "e7e5", "g1f3"):
        board.push_uci(uci)
    assert data["fen"] == board.fen()
    assert data["trained"] is False
    assert set(data["policy"]) == {m.uci() for m in board.legal_moves}
    assert sum(data["policy"].values()) == pytest.approx(1.0, abs=1e-6)
    w, d, l = data["wdl"]
    assert data["score"] == pytest.approx(w + d / 2, abs=1e-6)
    att = data["attention"]
    assert (att["layers"], att["heads"]) == (2, 4)
    assert len(att["maps"]) == 2 and len(att["maps"][0]) == 4 and len(att["maps"][0][0]) == 64
    assert sum(att["maps"][1][3][10]) == pytest.approx(1.0, abs=1e-4)


def test_evaluate_readable_summary(checkpoint):
    result = run("evaluate", "--model", str(checkpoint))
    assert result.returncode == 0
    assert "WDL" in result.stdout and "UNTRAINED" in result.stdout
    assert len([line for line in result.stdout.splitlines() if line.startswith("  ")]) == 5


def test_evaluate_attention_summary_without_json(checkpoint):
    result = run("evaluate", "--model", str(checkpoint), "--attention")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("attention: 2 layers x 4 heads") for line in lines)
    heads = [line for line in lines if line.startswith("  L")]
    assert len(heads) == 8 and all("entropy" in line and "most attended" in line for line in heads)
    assert [line.split()[:2] for line in heads[::3]] == [["L0", "H0"], ["L0", "H3"], ["L1", "H2"]]  # from 0, as everywhere
    assert not any(line.lstrip().startswith("[[") for line in lines)  # no raw maps


def test_search_progress_on_stderr_unless_json(checkpoint, monkeypatch):
    from analysis.cli import main
    from analysis.cli.search_cmds import ProgressLine

    monkeypatch.setattr(ProgressLine, "LOG_EVERY_S", 0.0)  # a line per progress event
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        assert main(["search", "--model", "material", "--algo", "alphabeta", "--depth", "3"]) == 0
    progress = [line for line in err.getvalue().splitlines() if line.startswith("nodes ")]
    assert progress and all(" nps " in line and " best " in line and " pv " in line for line in progress)
    assert out.getvalue().startswith(chess.STARTING_FEN) and "bestmove" in out.getvalue()
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        assert main(["search", "--model", "material", "--algo", "alphabeta", "--depth", "3", "--json"]) == 0
    assert err.getvalue() == "" and json.loads(out.getvalue())["bestmove"]


@pytest.mark.parametrize("args, message", [
    (["--fen", "not a fen"], "invalid FEN"),
    (["--fen", "8/8/8/8/8/8/8/8 w - - 0 1"], "illegal position"),
    (["--fen", "4k3/8/8/8/8/8/4P3/4K3 w - - 65536 1"], "half-move clock 65536"),
    (["--moves", "e2e5"], "move 1 'e2e5' is illegal"),
    (["--moves", "e2e4", "zz"], "move 2 'zz' is not UCI"),
    (["--temperature", "0"], "temperature"),
    (["--device", "garbage"], "unknown device 'garbage'"),
    (["--device", "mps"], "unsupported device 'mps'"),
])
def test_bad_input_is_one_line(checkpoint, args, message):
    result = run("evaluate", "--model", str(checkpoint), *args)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr


def test_missing_model_file(tmp_path):
    result = run("evaluate", "--model", str(tmp_path / "nope.safetensors"))
    assert result.returncode != 0 and "no such file" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_unknown_preset(tmp_path):
    result = run("init", "--preset", "cf-huge", "--out", str(tmp_path / "x.safetensors"))
    assert result.returncode != 0 and "unknown preset 'cf-huge'" in result.stderr
    assert not (tmp_path / "x.safetensors").exists()


def test_a_network_answering_nan_is_one_line_not_a_traceback(tmp_path):
    import math

    import torch

    from analysis.checkpoint import save_checkpoint
    from analysis.models.chessformer import PRESETS, Chessformer

    model = Chessformer(PRESETS["cf-tiny"])
    with torch.no_grad():
        model.embed.weight.fill_(math.nan)
    path = save_checkpoint(tmp_path / "nan.safetensors", model, trained=False)
    result = run("evaluate", "--model", str(path))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f"error: {path.stem} gave non-finite output (wdl, q, q_err, st, st_err, policy) for the position "
        f"{chess.STARTING_FEN}"]
