"""Recovering a forgotten move: remove or steer the late unit the causal grid names.

For a forgotten position (a better move top at readout point ``p``, another move top at the output)
the *late* units are those whose write first shows in the stream after ``p``. Over them the causal
grid of the margin (better move's logit - final move's logit) names the unit whose removal raises
that margin most; the position is *recovered* when the better move becomes the output's top move
with that unit removed (scale 0) or steered (scale -1, the lens's flip). The control removes a late
unit of the same kind drawn at random with the item's own generator.

Which point a unit writes to is measured, not read off names: each layer of a kind is removed whole
and the first readout point whose residual changes is that layer's point (one batched pass a kind).
"""

from __future__ import annotations

import chess
import numpy as np
import torch

from analysis.lens import core
from analysis.models.lens import LensAdapter, Prepared

NO_UNITS = "the network has no units whose write can be scaled"


def write_points(adapter: LensAdapter, prepared: Prepared, kind: str) -> list[int]:
    """Per layer of ``kind``: the index of the first readout point whose residual changes when the
    whole layer's units are removed (len(readouts) - 1, the output, when none changes)."""
    units = adapter.units[kind]
    scales = core.unit_scales(adapter, kind, 1 + units.layers)
    for layer in range(units.layers):
        scales[1 + layer, layer] = 0.0
    with torch.inference_mode():
        residuals, _ = adapter.run(prepared, 1 + units.layers, {kind: scales}, capture=True)
    last = len(residuals) - 1
    points = []
    for layer in range(units.layers):
        changed = [i for i, r in enumerate(residuals) if not torch.equal(r[1 + layer], r[0])]
        points.append(changed[0] if changed else last)
    return points


def late_units(points: list[int], per_layer: int, after: int) -> list[tuple[int, int]]:
    """Every (layer, index) whose layer writes at a readout point after index ``after``."""
    return [(layer, u) for layer, point in enumerate(points) if point > after for u in range(per_layer)]


def margin_effects(adapter: LensAdapter, prepared: Prepared, kind: str, units: list[tuple[int, int]],
                   better: int, final: int) -> tuple[np.ndarray, np.ndarray]:
    """The causal grid restricted to ``units``: the margin change (better - final logit) when each is
    removed, and which were measured exactly. At most ``core.EXACT_UNITS`` units are all removed
    exactly; beyond that attribution patching ranks them and the ``core.AUTO_TOP`` strongest are
    re-measured exactly (the grid's own rule); the rest keep -inf so they are never named."""
    chosen = list(range(len(units)))
    if len(units) > core.EXACT_UNITS:
        estimate = core.attribution(adapter, prepared, kind, better) - core.attribution(adapter, prepared, kind, final)
        flat = np.array([estimate[layer, u] for layer, u in units])
        chosen = list(np.argsort(-np.abs(flat), kind="stable")[:core.AUTO_TOP])
    clean, logits, _ = core.single_ablations(adapter, prepared, kind, [units[i] for i in chosen])
    base = clean.logits[0, better] - clean.logits[0, final]
    measured = (logits[:, better] - logits[:, final] - base).float().cpu().numpy()
    effect = np.full(len(units), -np.inf)
    effect[chosen] = measured
    exact = np.zeros(len(units), bool)
    exact[chosen] = True
    return effect, exact


def top_with(adapter: LensAdapter, prepared: Prepared, kind: str, unit: tuple[int, int], scales: list[float]) -> list[int]:
    """The output's top move (index in ``prepared.moves``) with ``unit`` scaled by each of ``scales``."""
    grid = core.unit_scales(adapter, kind, len(scales))
    for v, s in enumerate(scales):
        grid[v, unit[0], unit[1]] = s
    with torch.inference_mode():
        _, out = adapter.run(prepared, len(scales), {kind: grid})
    return out.logits.argmax(-1).tolist()


def recover(adapter: LensAdapter, board: chess.Board, better: str, final: str, point: int,
            rng: np.random.Generator) -> dict:
    """Per unit kind: the named late unit, its margin effect, whether removing or steering it
    recovers ``better``, and the same for a random late unit of that kind (the control)."""
    kinds = [k for k in adapter.units if adapter.why_not(k) is None]
    if not kinds:
        return {"reason": NO_UNITS}
    prepared = core.prepare(adapter, board)
    b, f = core.move_index(prepared, better), core.move_index(prepared, final)
    out = {}
    for kind in kinds:
        units = late_units(write_points(adapter, prepared, kind), adapter.units[kind].per_layer, point)
        if not units:
            out[kind] = {"reason": f"no {kind} unit writes after the point where the better move was last top"}
            continue
        effect, exact = margin_effects(adapter, prepared, kind, units, b, f)
        named = units[int(np.argmax(effect))]
        control = units[int(rng.integers(len(units)))]
        removed, steered = top_with(adapter, prepared, kind, named, [0.0, -1.0])
        (random_removed,) = top_with(adapter, prepared, kind, control, [0.0])
        out[kind] = {"unit": list(named), "effect": round(float(effect.max()), 5), "late": len(units),
                     "exact": int(exact.sum()), "removed": removed == b, "steered": steered == b,
                     "control_unit": list(control), "control_removed": random_removed == b}
    return out
