"""Building lc0 networks from a config (a checkpoint's, or one read off an lc0 file by ``convert``).

The two families, ``lc0-resnet`` and ``lc0-attention`` (registered in
``family.py``), share this entry point.
"""

from __future__ import annotations

from torch import nn

from analysis.models.lc0.attention import Lc0Attention
from analysis.models.lc0.config import AttentionConfig, ResNetConfig, config_from_dict
from analysis.models.lc0.resnet import Lc0ResNet

RESNET, ATTENTION = "lc0-resnet", "lc0-attention"
FAMILIES = (RESNET, ATTENTION)


def build(family: str, config: dict | ResNetConfig | AttentionConfig) -> nn.Module:
    """An uninitialised network of ``family`` (weights come from a file)."""
    if family not in FAMILIES:
        raise ValueError(f"unknown lc0 family {family!r}")
    if isinstance(config, dict):
        config = config_from_dict("resnet" if family == RESNET else "attention", config)
    return Lc0ResNet(config) if family == RESNET else Lc0Attention(config)
