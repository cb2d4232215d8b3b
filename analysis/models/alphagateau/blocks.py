"""BNR (eq. 8) and the residual ResGATEAU block (eq. 9)."""

from __future__ import annotations

import torch
from torch import nn

from analysis.models.alphagateau.gateau import Gateau


class BNR(nn.Module):
    """ReLU(BatchNorm(x)) over the channels of (B, items, K) features.

    The paper's BatchNorm, statistics over every node (or edge) of the batch.
    The public code calls its BatchNorm with ``training=False`` everywhere, so
    its statistics never update (a learned affine map); we follow the paper.
    """

    def __init__(self, width: int):
        super().__init__()
        self.norm = nn.BatchNorm1d(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, items, k = x.shape
        return torch.relu(self.norm(x.reshape(b * items, k)).reshape(b, items, k))


class ResGateau(nn.Module):
    """(h, g) + GATEAU(BNR(GATEAU(BNR(h, g)))), BNR applied to nodes and edges alike."""

    def __init__(self, width: int, leaky_slope: float):
        super().__init__()
        self.norm_h1, self.norm_g1 = BNR(width), BNR(width)
        self.gateau1 = Gateau(width, leaky_slope)
        self.norm_h2, self.norm_g2 = BNR(width), BNR(width)
        self.gateau2 = Gateau(width, leaky_slope)

    def forward(self, h: torch.Tensor, g: torch.Tensor, senders: torch.Tensor, receivers: torch.Tensor):
        """-> h (B, N, K), g (B, E, K), the two layers' attention (B, 2, E)."""
        x, y, alpha1 = self.gateau1(self.norm_h1(h), self.norm_g1(g), senders, receivers)
        x, y, alpha2 = self.gateau2(self.norm_h2(x), self.norm_g2(y), senders, receivers)
        return h + x, g + y, torch.stack((alpha1, alpha2), dim=1)
