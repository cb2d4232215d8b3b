"""Loss functions for every model family.

- HL-Gauss (Imani & White 2018; ChessBench section 2, sigma = 0.75 bin width
  as recommended by Farebrother et al. 2024): a value in [0, 1] becomes a
  distribution over K uniform bins by integrating a Gaussian centred on it.
- Behavioural cloning: cross-entropy against the oracle move.
- Chessformer (Monroe & Chalmers, appendix B): policy and soft-policy
  (temperature 4) cross-entropy, WDL cross-entropy, q L2 and error head,
  short-term value L2 and error head, with the paper's weights.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F


def bin_edges(num_bins: int, low: float = 0.0, high: float = 1.0) -> torch.Tensor:
    return torch.linspace(low, high, num_bins + 1)


def bin_centers(num_bins: int, low: float = 0.0, high: float = 1.0) -> torch.Tensor:
    edges = bin_edges(num_bins, low, high)
    return (edges[:-1] + edges[1:]) / 2


def hl_gauss_targets(values: torch.Tensor, num_bins: int, *, sigma_ratio: float = 0.75,
                     low: float = 0.0, high: float = 1.0) -> torch.Tensor:
    """(B,) values in [low, high] -> (B, K) HL-Gauss target distributions.

    Bin i gets the Gaussian mass between its edges; the mass beyond the
    support's ends is dropped and the rest renormalised to sum to 1.
    """
    edges = bin_edges(num_bins, low, high).to(values.device, torch.float32)
    sigma = sigma_ratio * (high - low) / num_bins
    v = values.to(torch.float32).clamp(low, high).unsqueeze(-1)
    cdf = 0.5 * (1 + torch.erf((edges - v) / (sigma * math.sqrt(2))))
    mass = cdf[..., 1:] - cdf[..., :-1]
    return mass / mass.sum(-1, keepdim=True).clamp_min(1e-12)


def hl_gauss_loss(logits: torch.Tensor, values: torch.Tensor, *, sigma_ratio: float = 0.75,
                  low: float = 0.0, high: float = 1.0) -> torch.Tensor:
    """Mean cross-entropy between ``logits`` (B, K) and the HL-Gauss targets of ``values``."""
    targets = hl_gauss_targets(values, logits.shape[-1], sigma_ratio=sigma_ratio, low=low, high=high)
    return soft_cross_entropy(logits, targets)


def expected_value(logits: torch.Tensor, low: float = 0.0, high: float = 1.0) -> torch.Tensor:
    """Mean of the predicted bin distribution (ChessBench: sum_i p_i * centre_i)."""
    centers = bin_centers(logits.shape[-1], low, high).to(logits.device, torch.float32)
    return torch.softmax(logits.float(), -1) @ centers


def soft_cross_entropy(logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Mean over the batch of -sum_k t_k log softmax(logits)_k; ``mask`` (B, K) True = allowed class."""
    logits = logits.float()
    if mask is not None:
        logits = logits.masked_fill(~mask, float("-inf"))
    log_probs = torch.log_softmax(logits, -1)
    terms = torch.where(targets > 0, targets * log_probs, torch.zeros_like(log_probs))
    return -terms.sum(-1).mean()


def behavioural_cloning_loss(logits: torch.Tensor, actions: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Cross-entropy against the oracle action index (ChessBench's BC target)."""
    logits = logits.float()
    if mask is not None:
        logits = logits.masked_fill(~mask, float("-inf"))
    return F.cross_entropy(logits, actions)


def sharpen(policy: torch.Tensor, temperature: float) -> torch.Tensor:
    """pi^(1/T), renormalised: T = 4 gives the Chessformer soft-policy target."""
    powered = torch.where(policy > 0, policy.clamp_min(1e-30) ** (1.0 / temperature), torch.zeros_like(policy))
    return powered / powered.sum(-1, keepdim=True).clamp_min(1e-30)


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
