"""Neurons: a layer's most active units on a position, one unit's activation per square, every unit's
attribution to a move's logit (one backward pass) with the top ones re-measured by exact ablation,
and where else a unit fires over a pool of positions (batched, with progress).

Works for any ``LensAdapter`` whose units have activations (``LensAdapter.activations``): MLP
hidden units of the transformers, the SE-ResNets' channels, Giraffe's hidden units (which have no
squares: their activation is one number per position). A unit's activation on a position is its
peak over the squares, as chessformer_lens scores them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import chess
import numpy as np
import torch

from analysis.lens import LensError, LensUnavailable
from analysis.lens.core import check_unit, grid, prepare, require
from analysis.models.lens import LensAdapter, Prepared

# progress(positions done, positions in the pool); returning False stops the scan where it is.
Progress = Callable[[int, int], "bool | None"]


@dataclass
class Activity:
    """One unit on one position: its peak activation, where (a square name; None without squares), its mean."""

    layer: int
    unit: int
    peak: float
    square: str | None
    mean: float


def activations(adapter: LensAdapter, prepared: Sequence[Prepared], kind: str, layer: int) -> torch.Tensor:
    """(B, S, units) activations of ``kind`` units in ``layer`` (``LensUnavailable`` when they have none)."""
    check_unit(adapter, kind, layer, 0)
    try:
        with torch.no_grad():
            return adapter.activations(prepared, kind, layer).float()
    except ValueError as exc:
        raise LensUnavailable(str(exc)) from None


def _square(acts: torch.Tensor, index: int) -> str | None:
    return chess.SQUARE_NAMES[index] if acts.shape[1] == 64 else None


def most_active(adapter: LensAdapter, board: chess.Board, layer: int, kind: str = "mlp",
                top: int = 10) -> list[Activity]:
    """The ``top`` units of ``layer`` with the largest peak activation on ``board``, largest first."""
    acts = activations(adapter, [prepare(adapter, board)], kind, layer)[0]  # (S, U)
    peak, where = acts.max(dim=0)
    order = torch.argsort(peak, descending=True, stable=True)[:max(0, top)]
    return [Activity(layer, int(u), float(peak[u]), _square(acts[None], int(where[u])), float(acts[:, u].mean()))
            for u in order]


def unit_map(adapter: LensAdapter, board: chess.Board, layer: int, unit: int, kind: str = "mlp") -> np.ndarray:
    """(64,) the unit's activation on every real square (a1 = 0 ... h8 = 63)."""
    check_unit(adapter, kind, layer, unit)
    acts = activations(adapter, [prepare(adapter, board)], kind, layer)
    if acts.shape[1] != 64:
        raise LensUnavailable(f"a {adapter.family} network's {kind} units have no squares: "
                              "each has one activation per position")
    return acts[0, :, unit].cpu().numpy()


@dataclass
class Carrier:
    """A unit's effect on a move's logit: the attribution estimate, and the exact change where measured."""

    layer: int
    unit: int
    attribution: float
    exact: float | None


def carriers(adapter: LensAdapter, board: chess.Board, uci: str, kind: str = "mlp", top: int = 8) -> list[Carrier]:
    """Every unit's attribution to ``uci``'s logit (one backward pass); the ``top`` largest |estimates|
    re-measured by exact ablation. Returned largest |estimate| first, the measured ones."""
    require(adapter, kind)
    result = grid(adapter, board, uci, kind, top=top)
    order = np.argsort(-np.abs(result.attribution), axis=None, kind="stable")[:top]
    out = []
    for flat in order:
        layer, unit = np.unravel_index(flat, result.logit.shape)
        measured = float(result.logit[layer, unit]) if result.exact[layer, unit] else None
        out.append(Carrier(int(layer), int(unit), float(result.attribution[layer, unit]), measured))
    return out


@dataclass
class Firing:
    """One pool position where the unit fires: its place in the pool, FEN, peak and square."""

    index: int
    fen: str
    peak: float
    square: str | None


@dataclass
class Scan:
    top: list[Firing]  # the strongest positions, strongest first
    mean: np.ndarray  # (S,) the unit's mean activation per square over the scanned positions
    scanned: int
    complete: bool  # False when ``progress`` stopped it early


def where_else(adapter: LensAdapter, boards: Sequence[chess.Board], layer: int, unit: int, kind: str = "mlp", *,
               top: int = 8, batch: int = 64, progress: Progress | None = None) -> Scan:
    """Where else unit (``layer``, ``unit``) fires: its peak on each of ``boards``, ``batch`` at a time."""
    check_unit(adapter, kind, layer, unit)
    if not boards:
        raise LensError("the pool of positions is empty")
    if batch < 1:
        raise LensError("batch must be 1 or more")
    peaks, squares, total, scanned, complete = [], [], None, 0, True
    for start in range(0, len(boards), batch):
        acts = activations(adapter, [adapter.prepare(b) for b in boards[start:start + batch]], kind, layer)[..., unit]
        peak, where = acts.max(dim=1)  # (B,)
        peaks.append(peak)
        squares += [_square(acts[..., None], int(w)) for w in where]
        total = acts.sum(0) if total is None else total + acts.sum(0)
        scanned += len(acts)
        if progress is not None and progress(scanned, len(boards)) is False:
            complete = scanned == len(boards)
            break
    peak = torch.cat(peaks)
    order = torch.argsort(peak, descending=True, stable=True)[:max(0, top)]
    found = [Firing(int(i), boards[int(i)].fen(), float(peak[i]), squares[int(i)]) for i in order]
    return Scan(found, (total / scanned).cpu().numpy(), scanned, complete)
