"""Fine-tuning losses for lc0 networks on Sightline's data: policy cross-entropy over legal
moves and the value's squared error in q = W - L, which fits WDL and tanh value heads alike.

Only networks of the classical input format can be fine-tuned here: the stored
training rows are that format's tokens (``family.encoding_for`` says so).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from analysis.models.losses import soft_cross_entropy


@dataclass(frozen=True)
class Lc0LossWeights:
    policy: float = 1.0
    value: float = 1.0


def lc0_losses(outputs: dict[str, torch.Tensor], batch: dict[str, torch.Tensor],
               weights: Lc0LossWeights) -> dict[str, torch.Tensor]:
    """Every term plus ``total``; ``batch`` holds ``policy``, ``legal`` (B, 1858) and ``q`` (B,) in [-1, 1]."""
    terms = {"policy": soft_cross_entropy(outputs["policy"], batch["policy"], batch["legal"]),
             "value": F.mse_loss(outputs["q"].float(), batch["q"])}
    terms["total"] = weights.policy * terms["policy"] + weights.value * terms["value"]
    return terms
