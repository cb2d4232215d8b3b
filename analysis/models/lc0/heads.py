"""Heads of lc0's attention body: attention policy (with promotions), value and moves-left.

Follows ``network_blas.cc`` (attention policy l.806 ff.). Shapes: B batch,
T = 64 squares, P policy embedding, K key depth.
"""

from __future__ import annotations

import torch
from torch import nn

from analysis.models.lc0.activations import Activation
from analysis.models.lc0.config import AttentionConfig
from analysis.models.lc0.encoder import EncoderLayer
from analysis.models.lc0.policy_map import attention_policy_index


class AttentionPolicyHead(nn.Module):
    """From->to logits Q K^T / sqrt(K) (T x T), plus promotion logits from the last-rank keys.

    ``promo[f, t, i] = L[48 + f, 56 + t] + o[t, i] + o[t, 3]`` with
    ``o = K[56:64] ip4^T`` (i = q, r, b); a knight promotion is the plain move.
    """

    def __init__(self, c: AttentionConfig):
        super().__init__()
        self.embed = None if c.shared_policy_embedding else nn.Linear(c.embed, c.policy_embed)
        self.act = Activation(c.activation)
        self.encoders = nn.ModuleList(
            EncoderLayer(c.policy_embed, c.policy_embed, c.policy_encoder_heads, c.policy_encoder_ffn,
                         c.ffn_activation, alpha=1.0, eps=1e-6) for _ in range(c.policy_encoders))
        self.wq, self.wk = nn.Linear(c.policy_embed, c.policy_dim), nn.Linear(c.policy_embed, c.policy_dim)
        self.promotion = nn.Linear(c.policy_dim, 4, bias=False)
        self.register_buffer("gather", attention_policy_index(), persistent=False)

    def forward(self, x: torch.Tensor, shared: torch.Tensor | None = None) -> torch.Tensor:
        return self.logits(x, shared)[0]

    def logits(self, x: torch.Tensor, shared: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, 1858) move logits and the (B, T, T) from->to logit matrix."""
        p = self.act(shared if self.embed is None else self.embed(x))  # (B, T, P)
        for layer in self.encoders:
            p, _ = layer(p)
        q, k = self.wq(p), self.wk(p)  # (B, T, K)
        moves = q @ k.transpose(-1, -2) / (q.shape[-1] ** 0.5)  # (B, T from, T to)
        o = self.promotion(k[:, 56:64])  # (B, 8 to-file, 4)
        promo = moves[:, 48:56, 56:64, None] + (o[:, :, :3] + o[:, :, 3:])[:, None]  # (B, 8 from, 8 to, 3)
        flat = torch.cat([moves.flatten(1), promo.flatten(1)], dim=1)  # (B, 4288)
        return flat[:, self.gather], moves


class AttentionValueHead(nn.Module):
    """Per-square embedding + act, flatten square-major, FC + act, FC: value or moves-left."""

    def __init__(self, c: AttentionConfig, channels: int, hidden: int, out: int):
        super().__init__()
        self.embed, self.act = nn.Linear(c.embed, channels), Activation(c.activation)
        self.fc1, self.fc2 = nn.Linear(64 * channels, hidden), nn.Linear(hidden, out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        v = self.act(self.embed(x)).flatten(1)  # (B, T*channels)
        return self.fc2(self.act(self.fc1(v)))
