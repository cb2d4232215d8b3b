"""The value head (Figure 3, with attention pooling, eq. 7) and the edge policy head (Figure 4)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from analysis.models.alphagateau.blocks import BNR


class AttentionPooling(nn.Module):
    """H = sum_i softmax_i(LeakyReLU(a . h_i)) h_i over a graph's nodes (eq. 7)."""

    def __init__(self, width: int, leaky_slope: float):
        super().__init__()
        self.a = nn.Linear(width, 1, bias=False)
        self.leaky_slope = leaky_slope

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        """h (B, N, K) -> (B, K)."""
        weights = torch.softmax(F.leaky_relu(self.a(h), self.leaky_slope).float(), dim=1).to(h.dtype)  # (B, N, 1)
        return (weights * h).sum(dim=1)


class ValueHead(nn.Module):
    """Nodes -> BNR, Linear, BNR, attention pooling, ReLU, Linear 1, tanh: the value in [-1, 1]."""

    def __init__(self, width: int, leaky_slope: float):
        super().__init__()
        self.norm1, self.linear, self.norm2 = BNR(width), nn.Linear(width, width), BNR(width)
        self.pool = AttentionPooling(width, leaky_slope)
        self.out = nn.Linear(width, 1)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        """h (B, N, K) -> (B,)."""
        pooled = self.pool(self.norm2(self.linear(self.norm1(h))))  # (B, K)
        return torch.tanh(self.out(torch.relu(pooled))).squeeze(-1)


class PolicyHead(nn.Module):
    """Edges -> BNR, Linear, BNR, Linear 1: one logit per edge, so any board size has its policy."""

    def __init__(self, width: int):
        super().__init__()
        self.norm1, self.linear, self.norm2 = BNR(width), nn.Linear(width, width), BNR(width)
        self.out = nn.Linear(width, 1)

    def forward(self, g: torch.Tensor) -> torch.Tensor:
        """g (B, E, K) -> (B, E)."""
        return self.out(self.norm2(self.linear(self.norm1(g)))).squeeze(-1)
