"""lc0's classical SE-ResNet (Maia, meangirl): body, conv/classical policy, value and moves-left heads.

BatchNorm is folded into each convolution when the net is imported (as lc0
does at load), so every conv here has a plain bias. Follows lc0's blas
backend (``network_blas.cc``, ``se_unit.cc``).

Shapes: B batch, C channels, 8 x 8 board (rank, file) in the mover's frame.
"""

from __future__ import annotations

import torch
from torch import nn

from analysis.encoding.lc0_planes import PLANES
from analysis.models.lc0.activations import Activation
from analysis.models.lc0.config import ResNetConfig
from analysis.models.lc0.policy_map import conv_policy_index


def conv(cin: int, cout: int, k: int) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, k, padding=k // 2, bias=True)


class SEUnit(nn.Module):
    """Squeeze-excitation: per-channel scale (sigmoid) and shift from the board mean."""

    def __init__(self, channels: int, se: int, act: str):
        super().__init__()
        self.fc1, self.fc2, self.act = nn.Linear(channels, se), nn.Linear(se, 2 * channels), Activation(act)

    def forward(self, y: torch.Tensor) -> torch.Tensor:
        g = self.fc2(self.act(self.fc1(y.mean(dim=(2, 3)))))  # (B, 2C)
        scale, shift = g[:, :, None, None].chunk(2, dim=1)  # (B, C, 1, 1) each
        return torch.sigmoid(scale) * y + shift


class ResidualBlock(nn.Module):
    def __init__(self, c: ResNetConfig):
        super().__init__()
        self.conv1, self.conv2 = conv(c.channels, c.channels, 3), conv(c.channels, c.channels, 3)
        self.se = SEUnit(c.channels, c.se_channels, c.activation) if c.se_channels else None
        self.act = Activation(c.activation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv2(self.act(self.conv1(x)))  # (B, C, 8, 8)
        if self.se is not None:
            y = self.se(y)
        return self.act(y + x)


class ConvPolicyHead(nn.Module):
    """3x3 conv + act, 3x3 conv to 80 planes, gathered into the 1858 moves."""

    def __init__(self, c: ResNetConfig):
        super().__init__()
        self.conv1, self.conv2, self.act = conv(c.channels, c.channels, 3), conv(c.channels, 80, 3), Activation(
            c.activation)
        self.register_buffer("gather", conv_policy_index(), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p = self.conv2(self.act(self.conv1(x))).flatten(1)  # (B, 80*64), NCHW
        return p[:, self.gather]  # (B, 1858)


class ClassicalPolicyHead(nn.Module):
    """1x1 conv + act, flatten (NCHW), FC to 1858."""

    def __init__(self, c: ResNetConfig):
        super().__init__()
        self.conv, self.act = conv(c.channels, c.policy_channels, 1), Activation(c.activation)
        self.fc = nn.Linear(64 * c.policy_channels, 1858)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.act(self.conv(x)).flatten(1))


class ConvScalarHead(nn.Module):
    """1x1 conv + act, flatten (NCHW), FC + act, FC to ``out``: the value and moves-left heads."""

    def __init__(self, channels: int, conv_out: int, hidden: int, out: int, act: str):
        super().__init__()
        self.conv, self.act = conv(channels, conv_out, 1), Activation(act)
        self.fc1, self.fc2 = nn.Linear(64 * conv_out, hidden), nn.Linear(hidden, out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(self.act(self.conv(x)).flatten(1))))


def value_outputs(v: torch.Tensor, wdl: bool) -> dict[str, torch.Tensor]:
    """WDL probabilities, q = W - L and d from a value head's raw output; a classical (tanh)
    head gives q alone: it has no draw estimate, and no "wdl" or "d" is made up for it."""
    if wdl:
        probs = torch.softmax(v, dim=-1)  # (B, 3)
        return {"wdl": probs, "q": probs[:, 0] - probs[:, 2], "d": probs[:, 1]}
    return {"q": torch.tanh(v[:, 0])}


class Lc0ResNet(nn.Module):
    family = "lc0-resnet"

    def __init__(self, config: ResNetConfig):
        super().__init__()
        c = self.config = config
        self.input = conv(PLANES, c.channels, 3)
        self.blocks = nn.ModuleList(ResidualBlock(c) for _ in range(c.blocks))
        self.act = Activation(c.activation)
        self.policy = ConvPolicyHead(c) if c.policy == "convolution" else ClassicalPolicyHead(c)
        self.value = ConvScalarHead(c.channels, c.value_channels, c.value_hidden, 3 if c.wdl else 1, c.activation)
        self.moves_left = (ConvScalarHead(c.channels, c.moves_left_channels, c.moves_left_hidden, 1, c.activation)
                           if c.moves_left_channels else None)

    def forward(self, tokens: torch.Tensor, need_attention: bool = False) -> dict[str, torch.Tensor]:
        """tokens (B, 64, 112), the encodings' layout (lc0's planes transposed) -> policy (B, 1858),
        wdl (B, 3), q, d, m (B,); "wdl" and "d" only with a WDL head, "m" only with a moves-left head."""
        x = self.act(self.input(tokens.transpose(1, 2).reshape(-1, PLANES, 8, 8)))  # (B, C, 8, 8)
        for block in self.blocks:
            x = block(x)
        return self.outputs(x)

    def outputs(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """The heads on the body's output (B, C, 8, 8); its own method so the lens reads every block
        through the very same heads."""
        out = {"policy": self.policy(x), **value_outputs(self.value(x), self.config.wdl)}
        if self.moves_left is not None:  # absent without a moves-left head
            out["m"] = torch.relu(self.moves_left(x)[:, 0])
        return out
