"""BNR (eq. 8) and the residual ResGATEAU block (eq. 9)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from analysis.models.alphagateau.gateau import Gateau


class BNR(nn.Module):
    """ReLU(BatchNorm(x)) over the channels of (B, items, K) features.

    The paper's BatchNorm, statistics over every node (or edge) of the batch.
    The public code calls its BatchNorm with ``training=False`` everywhere, so
    its statistics never update (a learned affine map); we follow the paper.
    """

    def __init__(self, width: int, momentum: float = 0.1, eps: float = 1e-5):
        super().__init__()
        # BatchNorm1d's parts without its integer batch counter (checkpoints hold float tensors).
        self.weight, self.bias = nn.Parameter(torch.ones(width)), nn.Parameter(torch.zeros(width))
        self.register_buffer("running_mean", torch.zeros(width))
        self.register_buffer("running_var", torch.ones(width))
        self.momentum, self.eps = momentum, eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, items, k = x.shape
        y = F.batch_norm(x.reshape(b * items, k), self.running_mean, self.running_var, self.weight, self.bias,
                         training=self.training, momentum=self.momentum, eps=self.eps)
        return torch.relu(y).reshape(b, items, k)


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
