"""``python -m analysis lens``: the JSON contract outside checks read, on the shipped cf-small and
the retired cb-cpu (weights/retired/), and bad input answered with exit status 2 and one line, nothing printed on stdout."""

from __future__ import annotations

import json
import subprocess
import sys

import chess
import pytest

from analysis.checkpoint import load_evaluator, save_checkpoint
from analysis.cli import main
from analysis.models import get_family
from tests.conftest import ROOT, weights_file

FEN = "r3k2r/ppp2ppp/2n1bn2/3qp3/3P4/2N1BN2/PPP1QPPP/R3K2R b KQkq - 4 9"
MODELS = {"cf-small": (6, 8), "cb-cpu": (4, 4)}


def _path(name: str) -> str:
    return str(weights_file(name))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_json_contract(name):
    argv = [sys.executable, "-m", "analysis", "lens", "--model", _path(name), "--fen", FEN, "--moves", "e8c8",
            "--ablate", "1:2", "--scale", "0", "--grid", "e8c8", "--json"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    board = chess.Board(FEN)
    evaluation = load_evaluator(_path(name), device="cpu").evaluate([board])[0]
    lens = out["lens"]
    readouts = lens["readouts"]
    assert readouts == out["about"]["readouts"] and out["fen"] == board.fen()
    assert readouts[0] == "embed" and len(readouts) == 1 + 2 * MODELS[name][0]
    assert lens["request"] == {"quantity": "lens", "moves": ["e8c8"]} and set(lens["curves"]) == {"e8c8"}
    points = lens["curves"]["e8c8"]
    assert len(points) == len(readouts) and set(points[0]) == {"logit", "prob", "rank"}
    assert abs(points[-1]["prob"] - evaluation.policy[chess.Move.from_uci("e8c8")]) < 1e-5
    assert len(lens["score"]) == len(readouts) and abs(lens["score"][-1] - evaluation.score) < 1e-5
    assert lens["top"][-1] == evaluation.best_move().uci()
    assert abs(lens["top_prob"][-1] - max(evaluation.policy.values())) < 1e-5
    ablated = out["ablate"]
    assert ablated["request"] == {"quantity": "ablate", "unit": "head", "layer": 1, "index": 2, "scale": 0.0}
    assert {row["uci"] for row in ablated["policy"]} == {m.uci() for m in board.legal_moves}
    assert abs(sum(row["scaled"] for row in ablated["policy"]) - 1) < 1e-4
    assert 0 <= ablated["scaled_score"] <= 1
    layers, heads = MODELS[name]
    grid = out["grid"]
    assert grid["request"] == {"quantity": "grid", "unit": "head", "move": "e8c8"} and grid["move"] == "e8c8"
    assert [len(row) for row in grid["logit"]] == [heads] * layers
    assert grid["exact"] == [[True] * heads] * layers


@pytest.fixture(scope="module")
def state_value_net(tmp_path_factory):
    family = get_family("chessbench")
    model = family.build(family.config({"head": "state_value", "layers": 1, "embed": 16, "heads": 2, "bins": 8}))
    return str(save_checkpoint(tmp_path_factory.mktemp("lens") / "sv.safetensors", model, trained=False))


BAD = [
    (["--ablate", "6:0"], "layer 6 is out of range"),
    (["--ablate", "0:8"], "head 8 is out of range"),
    (["--ablate", "0:0", "--unit", "mlp", "--scale", "1"], None),  # fine: one MLP unit, clean
    (["--ablate", "0:256", "--unit", "mlp"], "mlp 256 is out of range"),
    (["--ablate", "x"], "LAYER:INDEX"),
    (["--ablate", "0:0", "--scale", "4.5"], "outside [-4, 4]"),
    (["--ablate", "0:0", "--scale", "nan"], "scale must be a finite number"),
    (["--moves", "e1g1"], "not a legal move"),
    (["--grid", "e2e4"], "not a legal move"),
    (["--grid", "zz"], "not a UCI move"),
    (["--readout", "7.mlp"], "unknown readout point"),
    (["--fen", "not a fen"], "--fen: invalid FEN"),
    (["--fen", "4k3/8/8/8/8/8/4P3/4K3 w - - 151 1"], "half-move clock 151"),
    (["--fen", "4k3/8/8/8/8/8/4P3/4K3 w - - 0 10001"], "move number 10,001"),
    (["--fen", "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"], "no legal moves"),
    (["--neurons", "6"], "layer 6 is out of range"),
    (["--unit-map", "0:256"], "mlp 256 is out of range"),
    (["--unit-map", "0"], "--unit-map wants LAYER:INDEX"),
    (["--neurons", "0", "--unit", "head"], "'head' units have no activations"),
    (["--carriers", "e2e4"], "not a legal move"),
    (["--where-else", "0:0", "--pool", "/no/such/file"], "cannot read"),
    (["--neurons", "0", "--neuron-top", "0"], "top must be between 1 and 32"),
    (["--moves", "a7a6", "b7b6", "c6b4", "g7g6", "h7h6"], "moves takes at most 4 moves"),
]


@pytest.mark.parametrize("extra,message", BAD)
def test_bad_input_exits_2_with_one_line(capsys, extra, message):
    code = main(["lens", "--model", _path("cf-small"), "--fen", FEN, "--json", *extra])
    out, err = capsys.readouterr()
    if message is None:
        assert code == 0 and json.loads(out)["ablate"]["policy"]
        return
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err


def test_a_pool_file_is_read_as_the_site_reads_an_upload(capsys, tmp_path):
    pool = tmp_path / "pool.fen"
    pool.write_text(FEN + "\n8/8/8/8/8/8/8/8 w - - 0 1\n")
    code = main(["lens", "--model", _path("cf-small"), "--fen", FEN, "--where-else", "0:0", "--pool", str(pool)])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "line 2: illegal position" in err


def test_a_network_without_the_capability_is_refused(capsys, state_value_net):
    code = main(["lens", "--model", state_value_net, "--fen", FEN, "--grid", "e8c8", "--json"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "no policy" in err
    assert main(["lens", "--model", state_value_net, "--fen", FEN, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    lens = result["lens"]
    assert lens["top"] is None and lens["curves"] == {} and len(lens["score"]) == len(lens["readouts"]) == 3
    assert "policy" in result["about"]["unavailable"]


def test_a_large_grid_is_ranked_by_attribution_unless_exact_is_asked(capsys):
    base = ["lens", "--model", _path("cf-small"), "--fen", FEN, "--grid", "e8c8", "--unit", "mlp", "--json"]
    assert main(base) == 0
    ranked = json.loads(capsys.readouterr().out)["grid"]
    assert sum(map(sum, ranked["exact"])) == 16 and [len(r) for r in ranked["logit"]] == [256] * 6
    assert main(base + ["--exact"]) == 0
    exact = json.loads(capsys.readouterr().out)["grid"]
    assert all(map(all, exact["exact"])) and exact["request"]["exact"] is True
    for l, row in enumerate(ranked["exact"]):
        for u, measured in enumerate(row):
            if measured:
                assert abs(ranked["logit"][l][u] - exact["logit"][l][u]) < 1e-4


def test_heads_causal_adds_each_heads_importance(capsys):
    from analysis.heads.sample import load_sample
    from analysis.lens import lens_for
    from analysis.lens.atlas import causal_atlas

    assert main(["heads", "--model", _path("cf-small"), "--positions", "2", "--causal", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    evaluator = load_evaluator(_path("cf-small"), device="cpu")
    expected = causal_atlas(lens_for(evaluator.model, evaluator.encoding), load_sample(2))
    assert out["importance"]["positions"] == 2 and len(out["labels"]) == 6
    for key in ("kl", "score"):
        got = out["importance"][key]
        assert [len(row) for row in got] == [8] * 6
        assert max(abs(a - b) for ra, rb in zip(got, getattr(expected, key).tolist()) for a, b in zip(ra, rb)) < 1e-6


def test_the_neuron_options(capsys, tmp_path):
    """Most active units, a unit's map, a move's carriers and where else it fires, as the library gives them."""
    from analysis.lens import lens_for
    from analysis.lens import neurons

    pool = tmp_path / "pool.fen"
    pool.write_text("# two positions\n" + FEN + "\n\nrnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n")
    assert main(["lens", "--model", _path("cf-small"), "--fen", FEN, "--neurons", "2", "--unit-map", "2:5",
                 "--carriers", "e8c8", "--where-else", "2:5", "--pool", str(pool), "--neuron-top", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    evaluator = load_evaluator(_path("cf-small"), device="cpu")
    adapter, board = lens_for(evaluator.model, evaluator.encoding), chess.Board(FEN)
    assert out["neurons"]["units"] == [{"index": a.unit, "peak": a.peak, "square": a.square, "mean": a.mean}
                                       for a in neurons.most_active(adapter, board, 2, top=3)]
    assert len(out["neuron"]["map"]) == 64 and out["neuron"]["peak"] == max(
        neurons.unit_map(adapter, board, 2, 5).tolist())
    assert [(c["layer"], c["index"]) for c in out["carriers"]["carriers"]] == [
        (c.layer, c.unit) for c in neurons.carriers(adapter, board, "e8c8", top=3)]
    assert all(c["exact"] is not None for c in out["carriers"]["carriers"])
    where = out["where_else"]
    assert where["request"] == {"quantity": "where_else", "unit": "mlp", "layer": 2, "index": 5, "top": 3,
                                "pool": "fens"}
    assert where["scanned"] == 2 and len(where["top"]) == 2 and where["top"][0]["peak"] >= where["top"][1]["peak"]
