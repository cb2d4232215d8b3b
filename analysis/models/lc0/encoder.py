"""lc0's encoder layer: self-attention with smolgen biases and the feed-forward block.

Its own module because the body (``attention.py``) and the attention policy head (``heads.py``)
both build it. Follows ``network_blas.cc`` ``ForwardEncoderLayer``. Shapes: B batch, T = 64
squares, E embedding, H heads, D = d_model / H head depth, G smolgen generator width.
"""

from __future__ import annotations

import torch
from torch import nn

from analysis.models.lc0.activations import Activation
from analysis.models.lc0.config import AttentionConfig


class FFN(nn.Module):
    def __init__(self, embed: int, hidden: int, act: str):
        super().__init__()
        self.dense1, self.act, self.dense2 = nn.Linear(embed, hidden), Activation(act), nn.Linear(hidden, embed)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dense2(self.act(self.dense1(x)))


class Smolgen(nn.Module):
    """Per-position attention biases (H, T, T) generated from a compressed board summary."""

    def __init__(self, c: AttentionConfig, generator: nn.Linear):
        super().__init__()
        self.compress = nn.Linear(c.embed, c.smolgen_compress, bias=False)
        self.dense1 = nn.Linear(64 * c.smolgen_compress, c.smolgen_hidden)
        self.ln1 = nn.LayerNorm(c.smolgen_hidden, eps=1e-3)
        self.dense2 = nn.Linear(c.smolgen_hidden, c.heads * c.smolgen_gen)
        self.ln2 = nn.LayerNorm(c.heads * c.smolgen_gen, eps=1e-3)
        self.act, self.heads = Activation(c.smolgen_activation), c.heads
        self.generator = [generator]  # shared by every layer; a list keeps it out of this module's state

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.compress(x).flatten(1)  # (B, T*hc), square-major
        h = self.ln1(self.act(self.dense1(h)))
        h = self.ln2(self.act(self.dense2(h))).view(x.shape[0], self.heads, -1)  # (B, H, G)
        return self.generator[0](h).view(x.shape[0], self.heads, 64, 64)  # (B, H, T, T)


class SelfAttention(nn.Module):
    def __init__(self, embed: int, d_model: int, heads: int, smolgen: Smolgen | None):
        super().__init__()
        self.q, self.k, self.v = (nn.Linear(embed, d_model) for _ in range(3))
        self.dense, self.heads, self.smolgen = nn.Linear(d_model, embed), heads, smolgen

    def forward(self, x: torch.Tensor, need_weights: bool):
        B, T, _ = x.shape
        q, k, v = (f(x).view(B, T, self.heads, -1).transpose(1, 2) for f in (self.q, self.k, self.v))  # (B,H,T,D)
        logits = q @ k.transpose(-1, -2) / (q.shape[-1] ** 0.5)  # (B, H, T, T)
        if self.smolgen is not None:
            logits = logits + self.smolgen(x)
        weights = torch.softmax(logits, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, -1)  # (B, T, d_model), heads head-major
        return self.dense(out), (weights if need_weights else None)


class EncoderLayer(nn.Module):
    """Post-LN DeepNorm layer: x = LN(alpha * f(x) + x) for attention, then for the FFN."""

    def __init__(self, embed: int, d_model: int, heads: int, ffn: int, ffn_act: str, alpha: float, eps: float,
                 smolgen: Smolgen | None = None):
        super().__init__()
        self.mha = SelfAttention(embed, d_model, heads, smolgen)
        self.ln1, self.ffn, self.ln2 = nn.LayerNorm(embed, eps=eps), FFN(embed, ffn, ffn_act), nn.LayerNorm(
            embed, eps=eps)
        self.alpha = alpha

    def forward(self, x: torch.Tensor, need_weights: bool = False):
        attended, weights = self.mha(x, need_weights)
        x = self.ln1(self.alpha * attended + x)
        return self.ln2(self.alpha * self.ffn(x) + x), weights
