"""lc0's attention body (T-series PE_MAP and BT-series PE_DENSE nets).

Follows lc0's blas backend (``network_blas.cc`` ``ComputeBlocking``,
``ForwardEncoderLayer``): input embedding, optional gates, DeepNorm encoder
layers (post-LN, residual branch scaled by alpha = (2 N)^-1/4) with smolgen
attention biases, then the heads of ``heads.py``.

Shapes: B batch, T = 64 squares (the network's frame), E embedding,
H heads, D = d_model / H head depth, G smolgen generator width.
"""

from __future__ import annotations

from functools import lru_cache

import torch
from torch import nn

from analysis.encoding.lc0_planes import PLANES
from analysis.encoding.policy_index import vocabulary
from analysis.models.lc0.activations import Activation
from analysis.models.lc0.config import AttentionConfig
from analysis.models.lc0.encoder import FFN, EncoderLayer, Smolgen
from analysis.models.lc0.heads import AttentionPolicyHead, AttentionValueHead
from analysis.models.lc0.resnet import value_outputs


@lru_cache(maxsize=1)
def position_encoding() -> torch.Tensor:
    """lc0's fixed ``kPosEncoding`` (T, 64): -1 on the square itself, 1 where a queen or knight reaches."""
    table = torch.zeros(64, 64, device="cpu")
    for from_square, to_square, promotion in vocabulary():
        if promotion is None:
            table[from_square, to_square] = 1.0
    table.fill_diagonal_(-1.0)
    return table


class InputEmbedding(nn.Module):
    """Planes -> (B, T, E): position map or dense features, projection, gates, embedding FFN."""

    def __init__(self, c: AttentionConfig, alpha: float):
        super().__init__()
        self.dense = c.embedding == "pe_dense"
        if self.dense:
            self.preproc = nn.Linear(64 * 12, 64 * c.dense_features)
        else:
            self.register_buffer("pos", position_encoding(), persistent=False)
        self.proj = nn.Linear(PLANES + (c.dense_features if self.dense else 64), c.embed)
        self.act = Activation(c.activation)
        self.ln = nn.LayerNorm(c.embed, eps=c.eps) if self.dense else None
        self.mult_gate = nn.Parameter(torch.ones(64, c.embed)) if c.gates else None
        self.add_gate = nn.Parameter(torch.zeros(64, c.embed)) if c.gates else None
        self.ffn = FFN(c.embed, c.embedding_ffn, c.ffn_activation) if c.embedding_ffn else None
        self.ffn_ln = nn.LayerNorm(c.embed, eps=c.eps) if c.embedding_ffn else None
        self.alpha = alpha

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = tokens.reshape(-1, 64, PLANES)  # (B, T, 112)
        if self.dense:
            extra = self.preproc(x[:, :, :12].flatten(1)).view(x.shape[0], 64, -1)  # (B, T, D)
        else:
            extra = self.pos.expand(x.shape[0], -1, -1)  # (B, T, 64)
        x = self.act(self.proj(torch.cat([x, extra], dim=-1)))  # (B, T, E)
        if self.ln is not None:
            x = self.ln(x)
        if self.mult_gate is not None:
            x = x * self.mult_gate + self.add_gate
        if self.ffn is not None:
            x = self.ffn_ln(self.alpha * self.ffn(x) + x)
        return x


class Lc0Attention(nn.Module):
    family = "lc0-attention"

    def __init__(self, config: AttentionConfig):
        super().__init__()
        c = self.config = config
        alpha = (2.0 * c.encoders) ** -0.25
        self.embedding = InputEmbedding(c, alpha)
        self.smolgen_w = nn.Linear(c.smolgen_gen, 64 * 64, bias=False) if c.smolgen_compress else None
        self.encoders = nn.ModuleList(
            EncoderLayer(c.embed, c.d_model, c.heads, c.ffn, c.ffn_activation, alpha, c.eps,
                         Smolgen(c, self.smolgen_w) if c.smolgen_compress else None)
            for _ in range(c.encoders))
        self.policy_embedding = (nn.Linear(c.embed, c.policy_embed) if c.shared_policy_embedding else None)
        self.policy_heads = nn.ModuleDict({name: AttentionPolicyHead(c) for name in c.policy_heads})
        self.value_heads = nn.ModuleDict({name: AttentionValueHead(c, c.value_channels, c.value_hidden,
                                                                   3 if c.wdl else 1) for name in c.value_heads})
        self.moves_left = (AttentionValueHead(c, c.moves_left_channels, c.moves_left_hidden, 1)
                           if c.moves_left_channels else None)

    def forward(self, tokens: torch.Tensor, need_attention: bool = False) -> dict[str, torch.Tensor]:
        """tokens (B, 64, 112) (lc0's planes transposed) -> policy (B, 1858), wdl (B, 3), q, d, m (B,); every head as
        "policy.NAME" / "wdl.NAME"; with ``need_attention`` "attention" (B, L, H, T, T), network frame."""
        x = self.embedding(tokens)
        maps = []
        for layer in self.encoders:
            x, weights = layer(x, need_attention)
            maps.append(weights)
        out = self.outputs(x)
        if need_attention:
            out["attention"] = torch.stack(maps, dim=1)
        return out

    def outputs(self, x: torch.Tensor, every_head: bool = True) -> dict[str, torch.Tensor]:
        """The heads on the body's output (B, T, E): the forward's outputs without attention maps.
        Its own method so the lens reads any residual point through the very same heads; with
        ``every_head`` False only the default policy and value heads run (what the lens reads)."""
        c = self.config
        embedded = self.policy_embedding(x) if self.policy_embedding is not None else None
        out: dict[str, torch.Tensor] = {}
        for name in c.policy_heads if every_head else (c.policy_head,):
            out[f"policy.{name}"] = self.policy_heads[name](x, embedded)
        for name in c.value_heads if every_head else (c.value_head,):
            for key, value in value_outputs(self.value_heads[name](x), c.wdl).items():
                out[f"{key}.{name}"] = value
        out["policy"] = out[f"policy.{c.policy_head}"]
        out.update({key: out[f"{key}.{c.value_head}"] for key in ("wdl", "q", "d") if f"{key}.{c.value_head}" in out})
        if self.moves_left is not None and every_head:  # absent without a moves-left head
            out["m"] = torch.relu(self.moves_left(x)[:, 0])
        return out
