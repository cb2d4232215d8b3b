"""The modality-separated first layer (Lai 2015, section 4.2, Figure 3).

Global, piece-centric and square-centric features each feed only their own group of units;
the groups meet in the next layer. One Linear per group, so the blocks the paper leaves out
are not stored as zeros.
"""

from __future__ import annotations

import torch
from torch import nn

from analysis.encoding.giraffe.features import GLOBAL_SIZE, PIECE_SIZE, SQUARE_SIZE

_PIECE_START = GLOBAL_SIZE
_SQUARE_START = GLOBAL_SIZE + PIECE_SIZE


def split_groups(features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(..., 363) -> global (..., 15), piece (..., 220), square (..., 128)."""
    return (features[..., :_PIECE_START], features[..., _PIECE_START:_SQUARE_START],
            features[..., _SQUARE_START:])


class GroupedLayer(nn.Module):
    """ReLU(W_g g), ReLU(W_p p), ReLU(W_s s) concatenated; ``extra`` inputs join the global group."""

    def __init__(self, global_units: int, piece_units: int, square_units: int, extra: int = 0):
        super().__init__()
        self.global_in = nn.Linear(GLOBAL_SIZE + extra, global_units)
        self.piece_in = nn.Linear(PIECE_SIZE, piece_units)
        self.square_in = nn.Linear(SQUARE_SIZE, square_units)
        self.units = global_units + piece_units + square_units

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        g, p, s = split_groups(features)  # (B, 15) (B, 220) (B, 128)
        return torch.relu(torch.cat([self.global_in(g), self.piece_in(p), self.square_in(s)], dim=-1))
