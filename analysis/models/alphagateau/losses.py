"""AlphaZero's loss (the paper's eq. 10): policy cross-entropy against the search's improved
policy over the legal edges, plus the squared error of the value against the game result."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from analysis.models.losses import soft_cross_entropy


@dataclass(frozen=True)
class AlphaGateauLossWeights:
    policy: float = 1.0
    value: float = 1.0


def alphagateau_losses(outputs: dict[str, torch.Tensor], batch: dict[str, torch.Tensor],
                       weights: AlphaGateauLossWeights) -> dict[str, torch.Tensor]:
    """``batch``: "policy" (B, E) target distribution, "legal" (B, E) bool, "value" (B,) in [-1, 1]."""
    terms = {
        "policy": soft_cross_entropy(outputs["policy"], batch["policy"], batch["legal"]),
        "value": F.mse_loss(outputs["value"].float(), batch["value"].float()),
    }
    terms["total"] = weights.policy * terms["policy"] + weights.value * terms["value"]
    return terms
