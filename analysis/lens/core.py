"""Logit lens, unit ablation and steering, and the causal head grid, for any ``LensAdapter``.

Every quantity is computed for one position. Variants of it (clean, one unit scaled, each head
ablated in turn) run as one batch through the adapter, so an exact grid is one forward pass
(split in chunks of ``max_variants`` for big nets). Moves are real UCI moves, never mirrored.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import chess
import numpy as np
import torch

from analysis.lens import LensError, LensMismatch, LensUnavailable, checks
from analysis.models.lens import LensAdapter, Prepared, ReadOut, ResidualPatch


def require(adapter: LensAdapter, capability: str) -> None:
    reason = adapter.why_not(capability)
    if reason is not None:
        raise LensUnavailable(reason)


def prepare(adapter: LensAdapter, board: chess.Board) -> Prepared:
    checks.has_moves(board)
    return adapter.prepare(board)


def move_index(prepared: Prepared, uci: str) -> int:
    """Where the real UCI move ``uci`` sits in ``prepared.moves`` (LensError when bad or illegal)."""
    move = chess.Move.from_uci(checks.legal_move(prepared.board, uci))
    return prepared.moves.index(move)


def check_unit(adapter: LensAdapter, kind: str, layer: int, index: int) -> None:
    require(adapter, kind)
    units = adapter.units[kind]
    checks.layer_in_range(layer, units.layers)
    checks.index_in_range(kind, index, units.per_layer)


def check_readout(adapter: LensAdapter, name: str) -> int:
    return checks.known_readout(name, adapter.readouts)


@dataclass
class LensView:
    """The logit lens of one position: per readout point (rows) and legal move (columns)."""

    readouts: list[str]
    moves: list[str]
    logits: np.ndarray | None  # (R, M) raw policy logits
    probs: np.ndarray | None  # (R, M) softmax over the legal moves
    ranks: np.ndarray | None  # (R, M) 1 = the top move at that point
    score: np.ndarray | None  # (R,) expected score for the side to move
    wdl: np.ndarray | None  # (R, 3)

    def top(self) -> list[str] | None:
        """The network's own top move at each readout point."""
        return None if self.logits is None else [self.moves[i] for i in self.logits.argmax(1)]

    def settles(self, uci: str) -> int | None:
        """The first readout from which ``uci`` stays the top move to the end (None if it is not at the end)."""
        if self.ranks is None:
            return None
        column = self.ranks[:, self.moves.index(uci)]
        if column[-1] != 1:
            return None
        first = len(column) - 1
        while first > 0 and column[first - 1] == 1:
            first -= 1
        return first


def _numpy(x: torch.Tensor | None) -> np.ndarray | None:
    return None if x is None else x.detach().float().cpu().numpy()


def ranks_of(logits: np.ndarray) -> np.ndarray:
    """1 + how many moves have a strictly larger logit, per row."""
    return 1 + (logits[:, None, :] > logits[:, :, None]).sum(-1)


def logit_lens(adapter: LensAdapter, board: chess.Board, patch_from: chess.Board | None = None,
               point: str | None = None, squares: tuple[int, ...] = ()) -> LensView:
    """Every readout point read out through the heads (one forward pass, one batched unembed); with
    ``patch_from``, of the pass whose ``point`` on ``squares`` comes from that position's pass."""
    prepared = prepare(adapter, board)
    patches = () if patch_from is None else (residual_patch(adapter, prepared, patch_from, point, squares),)
    with torch.inference_mode():
        residuals, _ = adapter.run(prepared, capture=True, patches=patches)
        read = adapter.unembed(prepared, torch.cat(residuals), None)
    logits = _numpy(read.logits)
    probs = None if read.logits is None else _numpy(read.logits.float().softmax(-1))
    return LensView(list(adapter.readouts), [m.uci() for m in prepared.moves], logits, probs,
                    None if logits is None else ranks_of(logits), _numpy(read.score), _numpy(read.wdl))


def residual_patch(adapter: LensAdapter, prepared: Prepared, source: chess.Board, point: str,
                   squares: tuple[int, ...]) -> ResidualPatch:
    """``point`` on real ``squares`` from ``source``'s pass (prepared as the position is: no history
    difference), ready for ``prepared``'s pass; LensMismatch where the two cannot be patched."""
    require(adapter, "patch")
    check_readout(adapter, point)
    checks.has_moves(source)
    other = adapter.aligned(adapter.prepare(source), prepared)
    if not torch.equal(adapter.square_rows(prepared, point).cpu(), adapter.square_rows(other, point).cpu()):
        raise LensMismatch("the two positions put the squares on different rows (another side to move, or "
                           "another canonical transform of an lc0 net): they cannot be patched square for square")
    with torch.inference_mode():
        seen, _ = adapter.run(other, capture=True)
    mask = torch.zeros(1, 64, dtype=torch.bool)
    mask[0, list(squares)] = True
    return ResidualPatch(point, seen[adapter.readouts.index(point)], mask)


def unit_scales(adapter: LensAdapter, kind: str, variants: int) -> torch.Tensor:
    units = adapter.units[kind]
    return torch.ones(variants, units.layers, units.per_layer, device=adapter.device)


@dataclass
class Ablation:
    """One unit scaled: the policy over legal moves and the score, clean and scaled."""

    moves: list[str]
    clean: np.ndarray | None
    scaled: np.ndarray | None
    clean_score: float | None
    scaled_score: float | None

    def policy_change(self) -> list[tuple[str, float, float]]:
        """(move, clean prob, scaled prob), sorted by the change, largest rise first."""
        if self.clean is None:
            return []
        rows = zip(self.moves, self.clean.tolist(), self.scaled.tolist())
        return sorted(rows, key=lambda r: r[2] - r[1], reverse=True)


def ablate(adapter: LensAdapter, board: chess.Board, kind: str, layer: int, index: int, scale: float) -> Ablation:
    """One forward pass of two variants: clean, and unit (layer, index) of ``kind`` scaled by ``scale``."""
    check_unit(adapter, kind, layer, index)
    scale = checks.scale_in_range(scale)
    prepared = prepare(adapter, board)
    scales = unit_scales(adapter, kind, 2)
    scales[1, layer, index] = scale
    with torch.inference_mode():
        _, out = adapter.run(prepared, 2, {kind: scales})
    policy = None if out.logits is None else _numpy(out.logits.float().softmax(-1))
    score = _numpy(out.score)
    return Ablation([m.uci() for m in prepared.moves], None if policy is None else policy[0],
                    None if policy is None else policy[1],
                    None if score is None else float(score[0]), None if score is None else float(score[1]))


@dataclass
class Grid:
    """Each unit of a kind ablated in turn: the change (ablated - clean) of one move's logit and of
    the score. ``exact[l, u]``: measured by an ablated forward pass (else the attribution estimate)."""

    kind: str
    move: str
    logit: np.ndarray  # (layers, per_layer)
    score: np.ndarray | None
    exact: np.ndarray  # bool
    attribution: np.ndarray | None = None  # the one-backward-pass estimate of ``logit``, when computed
    clean_logit: float = 0.0
    clean_score: float | None = None
    extra: dict = field(default_factory=dict)


def single_ablations(adapter: LensAdapter, prepared: Prepared, kind: str, units: list[tuple[int, int]],
                     max_variants: int = 256) -> tuple[ReadOut, torch.Tensor | None, torch.Tensor | None]:
    """Each of ``units`` removed alone (exactly), in batches of ``max_variants`` variants: the clean
    output and, per unit, the policy logits (N, moves) and the score (N,) (None where absent)."""
    clean, logits, scores = None, [], []
    for start in range(0, max(1, len(units)), max_variants):
        chunk = units[start:start + max_variants]
        scales = unit_scales(adapter, kind, 1 + len(chunk))
        for v, (layer, index) in enumerate(chunk, start=1):
            scales[v, layer, index] = 0.0
        with torch.inference_mode():
            _, out = adapter.run(prepared, 1 + len(chunk), {kind: scales})
        clean = out if clean is None else clean
        logits.append(None if out.logits is None else out.logits[1:])
        scores.append(None if out.score is None else out.score[1:])
    return (clean, None if clean.logits is None else torch.cat(logits),
            None if clean.score is None else torch.cat(scores))


def _measure(adapter: LensAdapter, prepared: Prepared, kind: str, units: list[tuple[int, int]], column: int,
             max_variants: int) -> tuple[np.ndarray, np.ndarray | None, ReadOut]:
    """Exact ablation of each of ``units``: (logit change, score change) per unit, and the clean output."""
    clean, logits, scores = single_ablations(adapter, prepared, kind, units, max_variants)
    logit_change = _numpy(logits[:, column] - clean.logits[0, column])
    score_change = None if scores is None else _numpy(scores - clean.score[0])
    return logit_change, score_change, clean


def attribution(adapter: LensAdapter, prepared: Prepared, kind: str, column: int) -> np.ndarray:
    """Attribution patching: -d(move logit)/d(scale) at scale 1 for every unit, from one backward
    pass; the first-order estimate of the logit change when the unit is removed."""
    scales = unit_scales(adapter, kind, 1).requires_grad_(True)
    with torch.enable_grad():
        _, out = adapter.run(prepared, 1, {kind: scales})
        (grad,) = torch.autograd.grad(out.logits[0, column], scales)
    return -_numpy(grad[0])


# A grid removes each unit exactly when there are at most this many (one variant each); beyond it
# attribution patching ranks them and the AUTO_TOP strongest are re-measured exactly.
EXACT_UNITS = 256
AUTO_TOP = 16


def default_top(adapter: LensAdapter, kind: str) -> int | None:
    """None (every unit exact) for a small grid, else AUTO_TOP."""
    units = adapter.units[kind]
    return None if units.layers * units.per_layer <= EXACT_UNITS else AUTO_TOP


def grid(adapter: LensAdapter, board: chess.Board, uci: str, kind: str = "head", *, top: int | None = None,
         max_variants: int = 256) -> Grid:
    """The causal grid of move ``uci``: every unit ablated exactly (``top`` None), or ranked by
    attribution patching and the ``top`` largest |estimates| re-measured exactly."""
    require(adapter, "policy")
    require(adapter, kind)
    prepared = prepare(adapter, board)
    column = move_index(prepared, uci)
    shape = (adapter.units[kind].layers, adapter.units[kind].per_layer)
    everything = [(l, u) for l in range(shape[0]) for u in range(shape[1])]
    estimate = None
    if top is None:
        chosen = everything
    else:
        if top < 0:
            raise LensError("top must be 0 or more")
        estimate = attribution(adapter, prepared, kind, column)
        order = np.argsort(-np.abs(estimate), axis=None, kind="stable")[:top]
        chosen = [everything[i] for i in order]
    logit, score, clean = _measure(adapter, prepared, kind, chosen, column, max_variants)
    result = Grid(kind, uci, np.zeros(shape) if estimate is None else estimate.copy(),
                  None if score is None else np.full(shape, np.nan), np.zeros(shape, bool), estimate,
                  float(clean.logits[0, column]), None if clean.score is None else float(clean.score[0]))
    for i, (l, u) in enumerate(chosen):
        result.logit[l, u], result.exact[l, u] = logit[i], True
        if score is not None:
            result.score[l, u] = score[i]
    return result
