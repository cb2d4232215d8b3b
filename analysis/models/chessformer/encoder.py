"""The Chessformer encoder: self-attention over 64 squares and the DeepNorm Post-LN block.

Shapes: B batch, T = 64 tokens, E embedding, H heads, D = E / H head depth,
R = 225 two-dimensional displacements.
"""

from __future__ import annotations

import math
from functools import lru_cache

import torch
from torch import nn

from analysis.models.chessformer.config import ChessformerConfig


@lru_cache(maxsize=None)
def displacement_index() -> torch.Tensor:
    """(T, T) index into the 15 x 15 displacement table: 15*(dr+7) + (df+7), dr = r_i - r_j."""
    squares = torch.arange(64, device="cpu")  # cached: never on the meta device
    rank, file = squares // 8, squares % 8
    dr = rank[:, None] - rank[None, :] + 7
    df = file[:, None] - file[None, :] + 7
    return (15 * dr + df).long()


# ---------------------------------------------------------------------------
# Encoder


class SelfAttention(nn.Module):
    """Multi-head self-attention over the 64 squares with the chosen position representation."""

    def __init__(self, config: ChessformerConfig):
        super().__init__()
        E, H, D = config.embed, config.heads, config.head_dim
        self.heads, self.head_dim, self.position = H, D, config.position
        self.q = nn.Linear(E, E, bias=False)
        self.k = nn.Linear(E, E, bias=False)
        self.v = nn.Linear(E, E, bias=False)
        self.out = nn.Linear(E, E, bias=True)
        if config.position == "absolute":
            self.absolute = nn.Parameter(torch.zeros(64, E))  # c_i of eq. 4
        elif config.position == "relative_bias":
            self.relative_bias = nn.Parameter(torch.zeros(H, 225))  # d_ij of eq. 5
        else:  # shaw, eqs. 6-7: a^Q, a^K, a^V per head and displacement
            self.shaw_q = nn.Parameter(torch.randn(H, 225, D) * 0.02)
            self.shaw_k = nn.Parameter(torch.randn(H, 225, D) * 0.02)
            self.shaw_v = nn.Parameter(torch.randn(H, 225, D) * 0.02)
        self.register_buffer("rel", displacement_index().clone(), persistent=False)  # (T, T)

    def forward(self, x: torch.Tensor, need_weights: bool = False):
        B, T, E = x.shape
        H, D = self.heads, self.head_dim
        source = x + self.absolute if self.position == "absolute" else x
        q = self.q(source).view(B, T, H, D).transpose(1, 2)  # (B, H, T, D)
        k = self.k(source).view(B, T, H, D).transpose(1, 2)
        v = self.v(source).view(B, T, H, D).transpose(1, 2)
        scale = 1.0 / math.sqrt(D)

        if self.position == "shaw":
            logits = (q @ k.transpose(-1, -2) + self._shaw_logit_terms(q, k)) * scale
        else:
            logits = (q @ k.transpose(-1, -2)) * scale  # (B, H, T, T)
            if self.position == "relative_bias":
                logits = logits + self.relative_bias[:, self.rel]  # (H, T, T) broadcast
        weights = logits.softmax(dim=-1)
        out = weights @ v  # (B, H, T, D)
        if self.position == "shaw":
            out = out + self._shaw_value_term(weights)
        out = self.out(out.transpose(1, 2).reshape(B, T, E))
        return out, (weights if need_weights else None)

    def _shaw_tables(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """a^Q, a^K, a^V gathered per (query, key) pair, (H, T, T, D), and a^Q.a^K, (H, T, T).

        These depend on the weights only, never on the batch, so inference caches
        them until the weights change (parameter versions move on any in-place update).
        """
        version = tuple((t._version, t.data_ptr()) for t in (self.shaw_q, self.shaw_k, self.shaw_v)) + (
            self.shaw_q.device, self.shaw_q.dtype)
        cached = getattr(self, "_table_cache", None)
        if cached is not None and cached[0] == version and not torch.is_grad_enabled():
            return cached[1]
        aq, ak, av = self.shaw_q[:, self.rel], self.shaw_k[:, self.rel], self.shaw_v[:, self.rel]
        tables = (aq, ak, av, (aq * ak).sum(-1))
        if not torch.is_grad_enabled():
            self._table_cache = (version, tables)
        return tables

    # Below this batch size the per-displacement products are faster than contracting
    # the per-pair tables (measured with bench/inference.py: small batches make
    # H * T tiny matrix products; large ones make (B, H, T, 225) intermediates
    # that spill out of cache).
    SMALL_BATCH = 8

    def _shaw_logit_terms(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        """q_i.a^K_ij + a^Q_ij.k_j + a^Q_ij.a^K_ij: eq. 6 expanded, less the q_i.k_j term.

        No (B, H, T, T, D) tensor is ever built. The reference code (Ergodice's
        RPELogits) drops the a^Q.a^K term; the paper's eq. 6 keeps it, and so do we.
        """
        aq, ak, _, aq_ak = self._shaw_tables()
        B, H, T, _ = q.shape
        if B >= self.SMALL_BATCH:  # contract against the (H, T, T, D) weight tables
            return torch.einsum("bhid,hijd->bhij", q, ak) + torch.einsum("bhjd,hijd->bhij", k, aq) + aq_ak
        # Dot each query (key) with all 225 displacement vectors, then pick one per pair.
        q_ak = torch.gather(q @ self.shaw_k.transpose(-1, -2), -1, self.rel.expand(B, H, T, T))
        k_aq = torch.gather(k @ self.shaw_q.transpose(-1, -2), -1, self.rel.T.expand(B, H, T, T))
        return q_ak + k_aq.transpose(-1, -2) + aq_ak

    def _shaw_value_term(self, weights: torch.Tensor) -> torch.Tensor:
        """sum_j alpha_ij a^V_ij of eq. 7, (B, H, T, D)."""
        B, H, T, _ = weights.shape
        if B >= self.SMALL_BATCH:
            return torch.einsum("bhij,hijd->bhid", weights, self._shaw_tables()[2])
        binned = weights.new_zeros(B, H, T, 225)  # alpha scattered into displacement bins
        binned.scatter_(-1, self.rel.expand(B, H, T, T), weights)  # each (i, r) has at most one j
        return binned @ self.shaw_v


class EncoderLayer(nn.Module):
    """Post-LN block with DeepNorm: x = norm(alpha * x + f(x))."""

    def __init__(self, config: ChessformerConfig):
        super().__init__()
        self.attention = SelfAttention(config)
        self.norm1 = nn.RMSNorm(config.embed, eps=1e-5)
        self.ffn = nn.Sequential(nn.Linear(config.embed, config.ffn), nn.Mish(), nn.Linear(config.ffn, config.embed))
        self.norm2 = nn.RMSNorm(config.embed, eps=1e-5)
        self.alpha = (2 * config.layers) ** 0.25  # DeepNorm, encoder-only

    def forward(self, x: torch.Tensor, need_weights: bool = False):
        attended, weights = self.attention(x, need_weights)
        x = self.norm1(self.alpha * x + attended)
        x = self.norm2(self.alpha * x + self.ffn(x))
        return x, weights
