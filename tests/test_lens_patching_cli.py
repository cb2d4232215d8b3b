"""``python -m analysis lens --patch-from``: the logit lens of a patched pass (issue 38's contract): with
every square of a point from the corrupted position, its last readout is the corrupted position's own
output for every move legal in both; bad input exits 2 with one line."""

from __future__ import annotations

import json
import subprocess
import sys

import chess
import pytest

from analysis.cli import main
from tests.conftest import ROOT, weights_file
from tests.test_lens_patching import BLACK_TO_MOVE, CORRUPTED

NETS = {"maia-1900": "2.block", "cf-shaw": "3.attn"}


def _lens(capsys, name, *extra):
    assert main(["lens", "--model", str(weights_file(name)), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)["lens"]


def _in_both(patched, corrupted):
    both = set(patched["logits"]) & set(corrupted["logits"])
    assert len(both) > 20 and len(patched["logits"]) == chess.Board(BLACK_TO_MOVE).legal_moves.count()
    return sorted(both)


@pytest.mark.parametrize("name", sorted(NETS))
def test_every_square_from_the_corrupted_pass_gives_its_output(capsys, name):
    corrupted = _lens(capsys, name, "--fen", CORRUPTED)
    clean = _lens(capsys, name, "--fen", BLACK_TO_MOVE)
    patched = _lens(capsys, name, "--fen", BLACK_TO_MOVE, "--patch-from", CORRUPTED, "--patch-point", NETS[name],
                    "--patch-squares", "all")
    assert patched["request"]["patch"] == {"source": CORRUPTED, "point": NETS[name], "squares": list(range(64))}
    last = len(patched["readouts"]) - 1
    diff = max(abs(patched["logits"][m][last] - corrupted["logits"][m][last]) for m in _in_both(patched, corrupted))
    assert diff < 1e-5
    before = patched["readouts"].index(NETS[name])  # points before the patch are the clean pass's
    assert all(patched["logits"][m][:before] == clean["logits"][m][:before] for m in clean["logits"])
    some = _lens(capsys, name, "--fen", BLACK_TO_MOVE, "--patch-from", CORRUPTED, "--patch-point", NETS[name],
                 "--patch-squares", "d4,E4")
    assert some["request"]["patch"]["squares"] == [chess.D4, chess.E4]
    assert some["logits"] != clean["logits"] and some["logits"] != patched["logits"]


def test_the_contract_runs_as_a_command():
    base = [sys.executable, "-m", "analysis", "lens", "--model", str(weights_file("maia-1900")), "--json"]
    runs = [base + ["--fen", CORRUPTED],
            base + ["--fen", BLACK_TO_MOVE, "--patch-from", CORRUPTED, "--patch-point", "embed", "--patch-squares", "all"]]
    corrupted, patched = (json.loads(subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300,
                                                    check=True).stdout)["lens"] for argv in runs)
    assert max(abs(patched["logits"][m][-1] - corrupted["logits"][m][-1]) for m in _in_both(patched, corrupted)) < 1e-5


BAD = [
    ("maia-1900", ["--patch-point", "9.block"], "unknown readout point '9.block'"),
    ("maia-1900", ["--patch-point", "2.block", "--patch-squares", "e4,z9"], "'z9' is not a square"),
    ("maia-1900", ["--patch-point", "2.block", "--patch-squares", ","], "patch_squares wants 'all'"),
    ("maia-1900", ["--patch-point", "2.block", "--patch-from", "8/8/8/8/8/8/8/8 b - - 0 1"], "patch_from: "),
    ("maia-1900", ["--patch-point", "2.block", "--patch-from", chess.STARTING_FEN], "same side to move"),
    ("giraffe", ["--patch-point", "hidden"], "Giraffe's hidden layer has no squares"),
]


@pytest.mark.parametrize("name,extra,message", BAD)
def test_bad_patch_input_exits_2_with_one_line(capsys, name, extra, message):
    argv = ["lens", "--model", str(weights_file(name)), "--fen", BLACK_TO_MOVE, "--json", "--patch-from", CORRUPTED]
    code = main(argv + extra)
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err, err
