"""Loss functions shared by model families.

- HL-Gauss (Imani & White 2018; ChessBench section 2, sigma = 0.75 bin width
  as recommended by Farebrother et al. 2024): a value in [0, 1] becomes a
  distribution over K uniform bins by integrating a Gaussian centred on it.
- ``sharpen``: the soft-policy target.

Each family's own losses live beside its model (e.g. ``analysis.models.chessformer.losses``)
and take these pieces from here.
"""

from __future__ import annotations

import math

import torch


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


def sharpen(policy: torch.Tensor, temperature: float) -> torch.Tensor:
    """pi^(1/T), renormalised: T = 4 gives the Chessformer soft-policy target."""
    powered = torch.where(policy > 0, policy.clamp_min(1e-30) ** (1.0 / temperature), torch.zeros_like(policy))
    return powered / powered.sum(-1, keepdim=True).clamp_min(1e-30)
