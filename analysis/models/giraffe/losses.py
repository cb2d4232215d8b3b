"""Giraffe's training losses: the evaluator's value and the move evaluator's P(best move).

Value: L1 (the paper's TD-Leaf loss, chosen "because TD-Leaf generates errors with many
outliers") or L2 (the reference code's bootstrap). Move evaluator: binary cross-entropy of
each legal move's P(best), target 1 for the labelled best move (reference code).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class GiraffeLossWeights:
    value: float = 1.0
    policy: float = 1.0
    value_loss: Literal["l1", "l2"] = "l1"

    def __post_init__(self):
        if self.value_loss not in ("l1", "l2"):
            raise ValueError(f"value_loss must be l1 or l2, not {self.value_loss!r}")


def giraffe_losses(outputs: dict[str, torch.Tensor], batch: dict[str, torch.Tensor],
                   weights: GiraffeLossWeights) -> dict[str, torch.Tensor]:
    """Every term present in ``batch`` (unweighted) plus ``total``.

    ``batch`` may hold ``value`` (B,) targets in [-1, 1], and ``best`` (B,) the index of the
    best move among the legal moves with ``legal`` (B, 256) bool.
    """
    terms: dict[str, torch.Tensor] = {}
    if "value" in batch:
        error = outputs["value"].float() - batch["value"]
        terms["value"] = error.abs().mean() if weights.value_loss == "l1" else (error ** 2).mean()
    if "best" in batch:
        legal = batch["legal"]
        target = F.one_hot(batch["best"], legal.shape[1]).to(outputs["policy"].dtype)
        for name in ("policy", "policy_first"):  # both passes of the move evaluator, when present
            if name in outputs:
                bce = F.binary_cross_entropy_with_logits(outputs[name].float(), target, reduction="none")
                terms[name] = (bce * legal).sum() / legal.sum().clamp_min(1)
    if not terms:
        raise ValueError("a Giraffe batch needs value targets, best moves, or both")
    weight = {"policy_first": weights.policy}
    terms["total"] = sum(weight.get(name, getattr(weights, name, 0.0)) * value for name, value in terms.items())
    return terms
