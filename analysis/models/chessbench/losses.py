"""ChessBench training losses (Ruoss et al. section 2.2): cross-entropy of the predicted bins
against the value's bin, HL-Gauss smoothed (the NeurIPS version: sigma = 0.75 bin width) or
one-hot (the released code's ``training_utils.make_loss_fn``); cross-entropy of the 1968
action logits against the oracle's move for behavioural cloning."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from analysis.models.chessbench.config import ACTION_VALUE, BEHAVIOURAL_CLONING, STATE_VALUE
from analysis.models.chessbench.model import OUTPUT_NAMES
from analysis.models.losses import hl_gauss_targets, soft_cross_entropy

VALUE_TARGETS = ("hl_gauss", "one_hot")


@dataclass(frozen=True)
class ChessBenchLossWeights:
    """``value_target``: "hl_gauss" (the paper) or "one_hot" (the reference code's bins)."""

    value_target: str = "hl_gauss"
    sigma_ratio: float = 0.75  # HL-Gauss sigma in bin widths (Farebrother et al. 2024)

    def __post_init__(self) -> None:
        if self.value_target not in VALUE_TARGETS:
            raise ValueError(f"value_target must be one of {', '.join(VALUE_TARGETS)}, not {self.value_target!r}")
        if not self.sigma_ratio > 0:
            raise ValueError("sigma_ratio must be positive")


def one_hot_bins(values: torch.Tensor, bins: int) -> torch.Tensor:
    """(B,) win probabilities -> (B, K) one-hot bins; a value on an edge goes to the lower bin
    (the reference's ``searchsorted(edges, p, side='left')`` over the K - 1 interior edges)."""
    interior = torch.arange(1, bins, device=values.device, dtype=torch.float32) / bins
    label = torch.searchsorted(interior, values.float().clamp(0, 1).unsqueeze(-1), right=False).squeeze(-1)
    return F.one_hot(label, bins).float()


def value_targets(values: torch.Tensor, bins: int, weights: ChessBenchLossWeights) -> torch.Tensor:
    if weights.value_target == "one_hot":
        return one_hot_bins(values, bins)
    return hl_gauss_targets(values, bins, sigma_ratio=weights.sigma_ratio)


def chessbench_losses(outputs: dict[str, torch.Tensor], batch: dict[str, torch.Tensor],
                      weights: ChessBenchLossWeights) -> dict[str, torch.Tensor]:
    """The one term and ``total``. ``batch`` holds ``win`` (B,) for the value heads, the
    target action ``action`` (B,) for behavioural cloning."""
    if OUTPUT_NAMES[BEHAVIOURAL_CLONING] in outputs:
        loss = F.cross_entropy(outputs[OUTPUT_NAMES[BEHAVIOURAL_CLONING]].float(), batch["action"])
        return {"action": loss, "total": loss}
    key = OUTPUT_NAMES[ACTION_VALUE] if OUTPUT_NAMES[ACTION_VALUE] in outputs else OUTPUT_NAMES[STATE_VALUE]
    logits = outputs[key]
    loss = soft_cross_entropy(logits, value_targets(batch["win"], logits.shape[-1], weights))
    return {"value": loss, "total": loss}
