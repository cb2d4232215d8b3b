"""The evaluator network (Lai 2015, section 4.2): grouped first layer, one fully connected ReLU
layer, tanh output: the expected outcome in [-1, 1] for the side to move."""

from __future__ import annotations

import torch
from torch import nn

from analysis.models.giraffe.config import GiraffeConfig
from analysis.models.giraffe.grouped import GroupedLayer


class EvaluatorNet(nn.Module):
    def __init__(self, config: GiraffeConfig):
        super().__init__()
        self.first = GroupedLayer(config.global_units, config.piece_units, config.square_units)
        self.hidden = nn.Linear(self.first.units, config.hidden)
        self.out = nn.Linear(config.hidden, 1)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        h = self.first(features)                   # (B, units)
        h = torch.relu(self.hidden(h))             # (B, hidden)
        return torch.tanh(self.out(h)).squeeze(-1)  # (B,)
