"""Chessformer training losses (Monroe & Chalmers, appendix B): policy and soft-policy
(temperature 4) cross-entropy, WDL cross-entropy, q L2 and error head, short-term
value L2 and error head, with the paper's weights."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from analysis.models.losses import hl_gauss_loss, sharpen, soft_cross_entropy


@dataclass(frozen=True)
class ChessformerLossWeights:
    """Monroe & Chalmers, appendix B. ``q_cat`` is 0.1 only for CF-240M, excluded otherwise.

    The appendix describes the short-term head's three targets like q's but
    gives no separate weights; we reuse q's (our reading).
    """

    policy: float = 1.0
    soft_policy: float = 8.0
    wdl: float = 1.0
    q: float = 1.0
    q_cat: float = 0.0
    q_err: float = 1.0
    st: float = 1.0
    st_cat: float = 0.0
    st_err: float = 1.0
    soft_policy_temperature: float = 4.0


def _masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    weights = mask.to(values.dtype)
    return (values * weights).sum() / weights.sum().clamp_min(1.0)


def chessformer_losses(outputs: dict[str, torch.Tensor], batch: dict[str, torch.Tensor],
                       weights: ChessformerLossWeights) -> dict[str, torch.Tensor]:
    """Every term (unweighted) plus ``total`` (weighted sum).

    ``batch`` holds ``policy`` (B, 1858) target distribution, ``legal`` (B, 1858)
    bool, ``wdl`` (B, 3), ``q`` (B,) in [-1, 1], ``st`` (B,) in [-1, 1] with
    ``st_mask`` (B,) bool where a short-term target exists.
    """
    legal = batch["legal"]
    policy_target = batch["policy"]
    terms = {
        "policy": soft_cross_entropy(outputs["policy"], policy_target, legal),
        "soft_policy": soft_cross_entropy(outputs["soft_policy"],
                                          sharpen(policy_target, weights.soft_policy_temperature), legal),
        "wdl": soft_cross_entropy(outputs["wdl"], batch["wdl"]),
    }
    q_hat = outputs["q"].float()
    q = batch["q"]
    terms["q"] = F.mse_loss(q_hat, q)
    terms["q_err"] = F.mse_loss(outputs["q_err"].float(), (q - q_hat.detach()) ** 2)
    if weights.q_cat and "q_cat" in outputs:
        terms["q_cat"] = hl_gauss_loss(outputs["q_cat"], q, low=-1.0, high=1.0)
    st_mask = batch["st_mask"]
    st_hat = outputs["st"].float()
    st = batch["st"]
    terms["st"] = _masked_mean((st_hat - st) ** 2, st_mask)
    terms["st_err"] = _masked_mean((outputs["st_err"].float() - (st - st_hat.detach()) ** 2) ** 2, st_mask)
    if weights.st_cat and "st_cat" in outputs:
        terms["st_cat"] = hl_gauss_loss(outputs["st_cat"][st_mask], st[st_mask], low=-1.0, high=1.0) \
            if bool(st_mask.any()) else outputs["st_cat"].sum() * 0.0
    total = sum(getattr(weights, name) * value for name, value in terms.items())
    terms["total"] = total
    return terms
