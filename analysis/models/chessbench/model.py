"""The ChessBench predictor (Ruoss et al., "Amortized Planning with Large-Scale Transformers").

A decoder-only transformer without a causal mask, as the reference's
``src/transformer.py`` builds it:

- token embedding x sqrt(D) plus a learned position embedding;
- pre-LayerNorm blocks (eps 1e-5): bidirectional multi-head attention without
  biases (softmax in fp32), then a SwiGLU feed-forward ``silu(x W_gate) * (x W_up) W_down``
  of width 4D without biases;
- a final LayerNorm and a biased linear head read at the last position.

The input is shifted right as in the reference: BOS (id 0) in front, so the
network sees [0, fen77, action] (action value, 79 positions) or [0, fen77]
(state value and behavioural cloning, 78). The paper calls its blocks
"post-normalization"; the released code normalises before each sublayer,
which we follow, since its checkpoints and parameter counts come from it.

Shapes in comments: B batch, T sequence, D embedding, H heads, d = D / H.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from analysis.models.chessbench.config import ACTION_VALUE, BEHAVIOURAL_CLONING, STATE_VALUE, ChessBenchConfig

FAMILY = "chessbench"
OUTPUT_NAMES = {ACTION_VALUE: "action_logits", STATE_VALUE: "value_logits", BEHAVIOURAL_CLONING: "policy_logits"}


class SelfAttention(nn.Module):
    """Bidirectional multi-head attention, no biases, scaled by 1/sqrt(d)."""

    def __init__(self, config: ChessBenchConfig):
        super().__init__()
        D = config.embed
        self.heads, self.head_dim = config.heads, config.head_dim
        self.q = nn.Linear(D, D, bias=False)
        self.k = nn.Linear(D, D, bias=False)
        self.v = nn.Linear(D, D, bias=False)
        self.out = nn.Linear(D, D, bias=False)

    def forward(self, x: torch.Tensor, need_weights: bool = False):
        B, T, D = x.shape
        q, k, v = (proj(x).view(B, T, self.heads, self.head_dim).transpose(1, 2)
                   for proj in (self.q, self.k, self.v))  # (B, H, T, d)
        if not need_weights:
            out = F.scaled_dot_product_attention(q, k, v)
            return self.out(out.transpose(1, 2).reshape(B, T, D)), None
        logits = (q @ k.transpose(-1, -2)).float() / math.sqrt(self.head_dim)  # (B, H, T, T)
        weights = logits.softmax(-1)
        out = weights.to(v.dtype) @ v
        return self.out(out.transpose(1, 2).reshape(B, T, D)), weights


class SwiGLU(nn.Module):
    def __init__(self, config: ChessBenchConfig):
        super().__init__()
        D, F_ = config.embed, config.widening * config.embed
        self.gate = nn.Linear(D, F_, bias=False)
        self.up = nn.Linear(D, F_, bias=False)
        self.down = nn.Linear(F_, D, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Block(nn.Module):
    """x + attention(norm(x)), then x + swiglu(norm(x))."""

    def __init__(self, config: ChessBenchConfig):
        super().__init__()
        self.norm1 = nn.LayerNorm(config.embed, eps=1e-5)
        self.attention = SelfAttention(config)
        self.norm2 = nn.LayerNorm(config.embed, eps=1e-5)
        self.ffn = SwiGLU(config)

    def forward(self, x: torch.Tensor, need_weights: bool = False):
        attended, weights = self.attention(self.norm1(x), need_weights)
        x = x + attended
        return x + self.ffn(self.norm2(x)), weights


class ChessBenchTransformer(nn.Module):
    family = FAMILY

    def __init__(self, config: ChessBenchConfig):
        super().__init__()
        self.config = config
        D = config.embed
        self.token_embed = nn.Embedding(config.vocab, D)
        self.position_embed = nn.Embedding(config.sequence_length, D)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.layers))
        self.final_norm = nn.LayerNorm(D, eps=1e-5)
        self.head = nn.Linear(D, config.outputs)
        self.register_buffer("positions", torch.arange(config.sequence_length), persistent=False)
        self._init_weights()

    def _init_weights(self) -> None:
        """Haiku's defaults, as the reference gets them: embeddings truncated normal (std 1),
        linear weights truncated normal (std 1/sqrt(fan_in)), biases zero."""
        if self.token_embed.weight.is_meta:
            return
        for module in self.modules():
            if isinstance(module, nn.Embedding):
                nn.init.trunc_normal_(module.weight, std=1.0, a=-2.0, b=2.0)
            elif isinstance(module, nn.Linear):
                std = 1.0 / math.sqrt(module.in_features)
                nn.init.trunc_normal_(module.weight, std=std, a=-2 * std, b=2 * std)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)

    def forward(self, tokens: torch.Tensor, need_attention: bool = False) -> dict[str, torch.Tensor]:
        """tokens: (B, T - 1) ids, the FEN's 77 (+ the action). Returns raw logits (B, outputs) as
        "action_logits", "value_logits" or "policy_logits" (log_softmax gives the reference's output), and with ``need_attention`` "attention",
        (B, layers, H, T, T) softmax weights over the shifted sequence (BOS first)."""
        B = tokens.shape[0]
        shifted = torch.cat([tokens.new_zeros(B, 1), tokens.long()], dim=1)  # (B, T): BOS id 0 in front
        T = shifted.shape[1]
        if T != self.config.sequence_length:
            raise ValueError(f"a {self.config.head} network reads {self.config.sequence_length - 1} tokens "
                             f"a row, not {T - 1}")
        x = self.token_embed(shifted) * math.sqrt(self.config.embed) + self.position_embed(self.positions)  # (B, T, D)
        attention = []
        for block in self.blocks:
            x, weights = block(x, need_attention)
            if need_attention:
                attention.append(weights)
        # (B, outputs), read at the last position, named by the head (decoding and losses dispatch on it)
        out = {OUTPUT_NAMES[self.config.head]: self.head(self.final_norm(x[:, -1]))}
        if need_attention:
            out["attention"] = torch.stack(attention, dim=1)  # (B, L, H, T, T)
        return out


def build(config: dict | ChessBenchConfig) -> ChessBenchTransformer:
    if isinstance(config, dict):
        config = ChessBenchConfig(**config)
    return ChessBenchTransformer(config)


def parameter_count(config: ChessBenchConfig) -> int:
    """Counted analytically (tests compare with a meta-device build)."""
    D, F_, L = config.embed, config.widening * config.embed, config.layers
    block = 4 * D * D + 3 * D * F_ + 2 * 2 * D
    return (config.vocab + config.sequence_length) * D + L * block + 2 * D + D * config.outputs + config.outputs
