"""Activation patching measured as the paper measures it (issue 38): the drop in a move's log-odds
when chosen squares of a readout point come from a corrupted copy of the position.

No Django. Built on ``LensAdapter.run(..., patches=...)``: the clean pass and every patched variant
run as one batch, so a whole row of a study (every square set of one point, or of every point) is
one forward call. Clean and corrupted positions are prepared the same way (``LensAdapter.prepare``:
from the FEN alone, an lc0 net's history planes included), so a patch carries no history difference.
"""

from __future__ import annotations

from typing import Sequence

import chess
import torch

from analysis.models.lens import LensAdapter, Prepared, ResidualPatch

__all__ = ["log_odds", "patched_drop", "patched_drops"]


def log_odds(logits: torch.Tensor, index: int) -> torch.Tensor:
    """log p - log(1 - p) of move ``index`` under the softmax over the last axis (the legal moves),
    computed as its logit less the log-sum-exp of the others (stable for p near 0 or 1)."""
    others = logits.clone()
    others[..., index] = float("-inf")
    return logits[..., index] - torch.logsumexp(others, dim=-1)


def _move_index(clean: Prepared, move: chess.Move) -> int:
    try:
        return clean.moves.index(move)
    except ValueError:
        raise ValueError(f"{move.uci()} is not a legal move in {clean.board.fen()}") from None


def _masks(square_sets: Sequence[Sequence[int]]) -> torch.Tensor:
    """(len(square_sets), 64) bool: each set of real squares as one row."""
    masks = torch.zeros(len(square_sets), 64, dtype=torch.bool)
    for row, squares in enumerate(square_sets):
        squares = list(squares)
        if any(not 0 <= s < 64 for s in squares):
            raise ValueError(f"a square set holds a square outside 0..63: {squares}")
        masks[row, squares] = True
    return masks


def _source(adapter: LensAdapter, clean: Prepared, corrupted: Prepared, points: Sequence[str]) -> list[torch.Tensor]:
    """The corrupted pass's tensors at ``points``, its rows lined up with the clean pass's."""
    source = adapter.aligned(corrupted, clean)
    for point in points:
        if not torch.equal(adapter.square_rows(clean, point).cpu(), adapter.square_rows(source, point).cpu()):
            raise ValueError("the clean and corrupted positions put the squares on different rows (another side "
                             "to move, or another canonical transform): their streams cannot be patched square "
                             "for square")
    with torch.no_grad():
        seen, _ = adapter.run(source, capture=True)
    return [seen[adapter.check_point(p)] for p in points]


def patched_drops(adapter: LensAdapter, clean: Prepared, corrupted: Prepared, move: chess.Move,
                  points: Sequence[str], square_sets: Sequence[Sequence[int]]) -> torch.Tensor:
    """(len(points), len(square_sets)): the drop in log-odds of ``move`` (legal in the clean position)
    when each square set of each point is taken from the corrupted pass, the clean pass itself
    the first variant of the same batch; one forward call for the whole table."""
    index = _move_index(clean, move)
    masks = _masks(square_sets)
    sources = _source(adapter, clean, corrupted, points)
    sets, variants = len(square_sets), 1 + len(points) * len(square_sets)
    patches = []
    for i, (point, source) in enumerate(zip(points, sources)):
        squares = torch.zeros(variants, 64, dtype=torch.bool)
        squares[1 + i * sets:1 + (i + 1) * sets] = masks
        patches.append(ResidualPatch(point, source, squares))
    with torch.no_grad():
        _, out = adapter.run(clean, variants=variants, patches=patches)
    if out.logits is None:
        raise ValueError(adapter.why_not("policy") or "the network has no policy")
    odds = log_odds(out.logits.float(), index)
    return (odds[0] - odds[1:]).view(len(points), sets).cpu()


def patched_drop(adapter: LensAdapter, clean: Prepared, corrupted: Prepared, move: chess.Move, point: str,
                 square_sets: Sequence[Sequence[int]]) -> torch.Tensor:
    """(len(square_sets),): the drop in log-odds of ``move`` when each square set (real squares,
    a1 = 0) of ``point`` is taken from the corrupted pass; one batched forward call."""
    return patched_drops(adapter, clean, corrupted, move, [point], square_sets)[0]
