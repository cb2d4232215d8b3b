"""The causal atlas: each head's measured importance over a sample of positions.

For every position, every head is removed alone (exactly, one batched pass per position); the
head's importance is the mean over positions of KL(clean policy || ablated policy) over the legal
moves and of |change of the expected score for the side to move|. Joined with the head atlas's
pattern labels (``analysis.heads``), a head gets both what it looks at and what it does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import chess
import numpy as np
import torch

from analysis.lens import core
from analysis.models.lens import LensAdapter


@dataclass
class CausalAtlas:
    """(layers, heads) means over ``positions``; None where the network has no policy (or value)."""

    positions: int
    kl: np.ndarray | None
    score: np.ndarray | None

    def to_dict(self) -> dict:
        return {"positions": self.positions,
                "kl": None if self.kl is None else self.kl.tolist(),
                "score": None if self.score is None else self.score.tolist()}


def _kl(clean: torch.Tensor, ablated: torch.Tensor) -> torch.Tensor:
    """KL(clean || ablated) per ablated row, over the legal moves' logits (never below 0: a head
    that changes nothing gives rounding noise of either sign)."""
    p = clean.float().log_softmax(-1)
    q = ablated.float().log_softmax(-1)
    return (p.exp() * (p - q)).sum(-1).clamp_min(0.0)


def causal_atlas(adapter: LensAdapter, boards: Sequence[chess.Board], *, max_variants: int = 256,
                 progress: Callable[[int, int], None] | None = None) -> CausalAtlas:
    """Mean policy KL and mean |score change| of every head over ``boards`` (positions without
    legal moves are skipped)."""
    core.require(adapter, "head")
    units = adapter.units["head"]
    everything = [(l, h) for l in range(units.layers) for h in range(units.per_layer)]
    kl_sum, score_sum, counted = np.zeros(len(everything)), np.zeros(len(everything)), 0
    has_policy, has_value = adapter.has("policy"), adapter.has("value")
    for i, board in enumerate(boards):
        if any(board.legal_moves):
            prepared = adapter.prepare(board)
            clean, logits, scores = core.single_ablations(adapter, prepared, "head", everything, max_variants)
            if has_policy:
                kl_sum += _kl(clean.logits[0], logits).cpu().numpy()
            if has_value:
                score_sum += (scores - clean.score[0]).abs().cpu().numpy()
            counted += 1
        if progress is not None:
            progress(i + 1, len(boards))
    shape = (units.layers, units.per_layer)
    mean = (lambda total: (total / max(counted, 1)).reshape(shape))
    return CausalAtlas(counted, mean(kl_sum) if has_policy else None, mean(score_sum) if has_value else None)
