"""Recovering forgotten moves (analysis.studies.recovery): the named unit is the causal grid's
argmax over the late units, the recovery flags match a direct re-run with that unit scaled, the
random control is seeded, and the summary gives the shares per unit kind."""

from __future__ import annotations

import chess
import numpy as np
import pytest
import torch

from analysis.lens import lens_for
from analysis.lens import core
from analysis.models.chessformer import PRESETS, Chessformer
from analysis.models.chessformer.config import ChessformerConfig
from analysis.studies import recovery
from analysis.studies.methods.forgotten import Forgotten

FEN = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"


def _adapter(config=None):
    torch.manual_seed(0)
    return lens_for(Chessformer(config or PRESETS["cf-tiny"]).eval())


@pytest.fixture(scope="module")
def case():
    """An untrained cf-tiny and a constructed forgotten case: the output's runner-up as the better
    move, last top at ``embed`` (so every unit is late) or at ``0.mlp`` (only layer 1 is late)."""
    adapter = _adapter()
    board = chess.Board(FEN)
    view = core.logit_lens(adapter, board)
    order = np.argsort(-view.logits[-1])
    return adapter, board, view.moves[order[0]], view.moves[order[1]]


def _margin_grid(adapter, board, better, final, kind):
    """The margin's causal grid, recomputed from the lens's own exact grids of the two moves."""
    return core.grid(adapter, board, better, kind).logit - core.grid(adapter, board, final, kind).logit


def test_write_points_follow_the_readouts(case):
    adapter, board, _, _ = case
    prepared = core.prepare(adapter, board)
    readouts = list(adapter.readouts)
    assert recovery.write_points(adapter, prepared, "head") == [readouts.index(f"{l}.attn") for l in range(2)]
    assert recovery.write_points(adapter, prepared, "mlp") == [readouts.index(f"{l}.mlp") for l in range(2)]


@pytest.mark.parametrize("point", [0, 2])
def test_named_unit_is_the_grid_argmax_over_late_units(case, point):
    adapter, board, final, better = case
    found = recovery.recover(adapter, board, better, final, point, np.random.default_rng(0))
    for kind in ("head", "mlp"):
        margin = _margin_grid(adapter, board, better, final, kind)
        late = margin.copy()
        if point == 2:  # after 0.mlp: only layer 1 writes later
            late[0] = -np.inf
        layer, index = np.unravel_index(np.argmax(late), late.shape)
        row = found[kind]
        assert row["unit"] == [int(layer), int(index)]
        assert row["effect"] == pytest.approx(late.max(), abs=1e-4)
        assert row["late"] == (margin.size if point == 0 else margin.shape[1])
        assert row["control_unit"][0] >= (0 if point == 0 else 1)


def test_recovery_flags_match_a_direct_rerun(case):
    adapter, board, final, better = case
    found = recovery.recover(adapter, board, better, final, 0, np.random.default_rng(0))
    flags = []
    for kind, row in found.items():
        for key, unit, scale in (("removed", row["unit"], 0.0), ("steered", row["unit"], -1.0),
                                 ("control_removed", row["control_unit"], 0.0)):
            rerun = core.ablate(adapter, board, kind, *unit, scale)
            assert row[key] == (rerun.moves[int(np.argmax(rerun.scaled))] == better)
            flags.append(row[key])
    assert any(flags)  # this case recovers somewhere (steering an MLP unit), so the flag is not always False


def test_control_is_seeded(case):
    adapter, board, final, better = case
    runs = [recovery.recover(adapter, board, better, final, 0, np.random.default_rng([7, 3])) for _ in range(2)]
    assert runs[0] == runs[1]
    others = {tuple(recovery.recover(adapter, board, better, final, 0, np.random.default_rng(s))["mlp"]["control_unit"])
              for s in range(6)}
    assert len(others) > 1  # the draw follows the seed


def test_many_units_are_ranked_by_attribution_then_measured():
    """Beyond EXACT_UNITS late units the grid's rule applies: AUTO_TOP measured exactly, the named
    one the best of those, its effect the one a direct removal gives."""
    adapter = _adapter(ChessformerConfig(layers=2, embed=32, heads=4, ffn=160, value_channels=4, value_embed=16,
                                         reward_buckets=8))
    board = chess.Board(FEN)
    view = core.logit_lens(adapter, board)
    order = np.argsort(-view.logits[-1])
    final, better = view.moves[order[0]], view.moves[order[1]]
    row = recovery.recover(adapter, board, better, final, 0, np.random.default_rng(0))["mlp"]
    assert row["late"] == 320 and row["exact"] == core.AUTO_TOP
    rerun = core.ablate(adapter, board, "mlp", *row["unit"], 0.0)
    b, f = rerun.moves.index(better), rerun.moves.index(final)
    direct = (np.log(rerun.scaled[b] / rerun.scaled[f]) - np.log(rerun.clean[b] / rerun.clean[f]))
    assert row["effect"] == pytest.approx(direct, abs=1e-3)


def test_no_late_units_and_no_units_say_why(case):
    adapter, board, final, better = case
    last = len(adapter.readouts) - 1
    found = recovery.recover(adapter, board, better, final, last, np.random.default_rng(0))
    assert "no head unit writes after" in found["head"]["reason"]
    bare = lens_for(adapter.model)
    bare.units = {}
    assert recovery.recover(bare, board, better, final, 0, np.random.default_rng(0)) == {"reason": recovery.NO_UNITS}


def test_summary_counts_recovered_per_kind():
    def item(kinds):
        return {"kept": True, "forgotten": True, "recovery": {"kinds": kinds}}
    rows = [item({"head": {"removed": True, "steered": True, "control_removed": False}}),
            item({"head": {"removed": False, "steered": True, "control_removed": False}}),
            item({"head": {"reason": "no head unit writes after the point"}})]
    out = Forgotten._recovered(rows)
    assert out["head"]["removed"]["count"] == 1 and out["head"]["removed"]["n"] == 2
    assert out["head"]["steered"]["count"] == 2 and out["head"]["control_removed"]["count"] == 0
    assert out["head"]["no_late_units"] == 1
    assert Forgotten._recovered([item({"reason": recovery.NO_UNITS})]) == {"reason": recovery.NO_UNITS}
