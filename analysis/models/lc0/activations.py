"""Every activation lc0's ``NetworkFormat`` can name (``src/neural/backends/shared/activation.cc``)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

SELU_ALPHA, SELU_SCALE = 1.67326324, 1.05070098  # lc0's constants


def _selu(x: torch.Tensor) -> torch.Tensor:
    return SELU_SCALE * torch.where(x > 0, x, SELU_ALPHA * torch.expm1(x))


FUNCTIONS = {
    "mish": F.mish,
    "relu": F.relu,
    "none": lambda x: x,
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "selu": _selu,
    "swish": F.silu,
    "relu_2": lambda x: F.relu(x).square(),
    "softmax": lambda x: torch.softmax(x, dim=-1),
}


def resolve(name: str, default: str) -> str:
    """lc0's ``ACTIVATION_DEFAULT`` means the net's default activation."""
    return default if name == "default" else name


class Activation(nn.Module):
    """An activation chosen by lc0 name; no parameters."""

    def __init__(self, name: str):
        super().__init__()
        if name not in FUNCTIONS:
            raise ValueError(f"unknown activation {name!r}")
        self.name = name
        self.fn = FUNCTIONS[name]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(x)

    def extra_repr(self) -> str:
        return self.name
