"""Chessformer (Monroe & Chalmers, "Mastering Chess with a Transformer Model").

An encoder over 64 square tokens (the lc0 112-plane input, one token per
square in the mover's frame), with:

- input embedding: linear projection, then learned per-token, per-channel
  multiplicative and additive offsets (Appendix A-A);
- Post-LN encoder layers with DeepNorm residual scaling and initialisation,
  RMS norms without centering or bias, no biases in Q/K/V, biases kept in the
  FFN and the attention output projection, Mish FFN (Appendix A-B);
- a selectable position representation (Section II-B): ``absolute``,
  ``relative_bias`` (2-D displacement bias) or ``shaw`` (eqs. 6-7);
- an attention policy head (64x64 from->to logits plus promotion logits from
  the promotion-rank keys) mapped onto lc0's 1858-move vocabulary, a soft
  policy head, and the value heads "result" (WDL), "q" and "short-term"
  (reward, categorical reward distribution, predicted error) (Appendix A-C).

Tensor shapes in comments: B batch, T = 64 tokens, E embedding, H heads,
D = E / H head depth, R = 225 two-dimensional displacements.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from analysis.encoding.lc0_planes import INPUT_FORMAT, PLANES, RULE50_PLANE
from analysis.encoding.policy_index import POLICY_SIZE, PROMOTION_PIECES, vocabulary

FAMILY = "chessformer"
PositionKind = Literal["absolute", "relative_bias", "shaw"]


# Largest value of each size a config may hold (cf-240m, the largest preset, has 15 / 1024 /
# 32 / 4096 / 32 / 128 / 32 / 512). A checkpoint's header can claim any size, and even the
# meta-device skeleton that loading builds first takes time linear in the layer count (a
# 444-byte file claiming 1,000 layers held an admin request for 10 s), so configs are
# bounded when they are made, before anything is built.
CONFIG_LIMITS: dict[str, int] = {
    "layers": 64, "embed": 4096, "heads": 64, "ffn": 16384,
    "value_channels": 256, "value_embed": 1024, "reward_buckets": 512, "input_dense": 4096,
}


@dataclass(frozen=True)
class ChessformerConfig:
    layers: int = 8
    embed: int = 256
    heads: int = 8
    ffn: int = 256
    position: PositionKind = "shaw"
    value_channels: int = 32  # d_value of Appendix A-C
    value_embed: int = 128
    reward_buckets: int = 32  # categorical reward distribution of the q / short-term heads
    # Lc0's BT3+ "dense" input preprocessing (INPUT_EMBEDDING_PE_DENSE): the current
    # position's 12 piece planes, flattened over all squares, are projected to
    # ``input_dense`` extra features per token. Appendix A-A describes only the linear
    # projection; the paper's 243M parameter count for CF-240M is only reached with this
    # block (as in the authors' BT4 nets), so cf-240m enables it. 0 turns it off.
    input_dense: int = 0

    def __post_init__(self) -> None:
        for name in ("layers", "embed", "heads", "ffn", "value_channels", "value_embed", "reward_buckets"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        if not isinstance(self.input_dense, int) or isinstance(self.input_dense, bool) or self.input_dense < 0:
            raise ValueError(f"input_dense must be a non-negative integer, not {self.input_dense!r}")
        for name, limit in CONFIG_LIMITS.items():
            if getattr(self, name) > limit:
                raise ValueError(f"{name} {getattr(self, name)} is over the limit of {limit}")
        if self.embed % self.heads:
            raise ValueError(f"embed {self.embed} is not divisible by heads {self.heads}")
        if self.position not in ("absolute", "relative_bias", "shaw"):
            raise ValueError(f"unknown position representation {self.position!r}")

    @property
    def head_dim(self) -> int:
        return self.embed // self.heads

    def to_dict(self) -> dict:
        return asdict(self)


PRESETS: dict[str, ChessformerConfig] = {
    "cf-tiny": ChessformerConfig(layers=2, embed=32, heads=4, ffn=32, value_channels=4, value_embed=16,
                                 reward_buckets=8),
    "cf-small": ChessformerConfig(layers=6, embed=128, heads=8, ffn=256, value_channels=16, value_embed=64),
    "cf-6m": ChessformerConfig(layers=8, embed=256, heads=8, ffn=256),
    "cf-240m": ChessformerConfig(layers=15, embed=1024, heads=32, ffn=4096, input_dense=512),
}


# ---------------------------------------------------------------------------
# 2-D displacement tables


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


# ---------------------------------------------------------------------------
# Heads


def _policy_gather_index() -> torch.Tensor:
    """(1858,) index into the 4096 from->to logits followed by the 8 x 24 promotion block."""
    index = []
    for from_sq, to_sq, promotion in vocabulary():
        if promotion is None:
            index.append(from_sq * 64 + to_sq)
        else:
            piece = PROMOTION_PIECES.index(promotion)
            index.append(4096 + (from_sq % 8) * 24 + (to_sq % 8) * 3 + piece)
    return torch.tensor(index, dtype=torch.long, device="cpu")


class AttentionPolicyHead(nn.Module):
    """Policy logits by scaled dot product of from-square queries and to-square keys.

    Promotions: a projection of the rank-8 keys gives an offset per promotion
    piece (q, r, b, n); q/r/b promotion logits are the rank-7 -> rank-8 logit
    plus their offset and the knight's, and the plain entry is the knight
    promotion, as in lc0's attention policy.
    """

    def __init__(self, embed: int):
        super().__init__()
        self.query = nn.Linear(embed, embed)
        self.key = nn.Linear(embed, embed)
        self.promotion = nn.Linear(embed, 4, bias=False)
        self.scale = 1.0 / math.sqrt(embed)
        self.register_buffer("gather_index", _policy_gather_index(), persistent=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        B = tokens.shape[0]
        q, k = self.query(tokens), self.key(tokens)  # (B, T, E)
        moves = q @ k.transpose(-1, -2)  # (B, T, T) from x to
        offsets = self.promotion(k[:, 56:64]).transpose(1, 2)  # (B, 4, 8): q r b n, by to-file
        offsets = offsets[:, :3] + offsets[:, 3:4]  # (B, 3, 8)
        rank7_to_8 = moves[:, 48:56, 56:64]  # (B, 8 from-file, 8 to-file)
        promotions = rank7_to_8.unsqueeze(-1) + offsets.permute(0, 2, 1).unsqueeze(1)  # (B, 8, 8, 3)
        # lc0 adds the promotion offsets after scaling the move logits; we scale both alike,
        # which only matters when importing lc0 weights (we do not).
        flat = torch.cat([moves.reshape(B, 4096), promotions.reshape(B, 192)], dim=1) * self.scale
        return flat[:, self.gather_index]  # (B, 1858)


class ValueHead(nn.Module):
    """Per-token projection, flatten, value embedding; then the head's outputs."""

    def __init__(self, config: ChessformerConfig, outputs: dict[str, int]):
        super().__init__()
        self.tokens = nn.Linear(config.embed, config.value_channels)
        self.embed = nn.Linear(64 * config.value_channels, config.value_embed)
        self.outputs = nn.ModuleDict({name: nn.Linear(config.value_embed, n) for name, n in outputs.items()})

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        h = F.mish(self.tokens(x)).flatten(1)  # (B, T * C)
        h = F.mish(self.embed(h))  # (B, value_embed)
        return {name: layer(h) for name, layer in self.outputs.items()}


# ---------------------------------------------------------------------------
# The network


class Chessformer(nn.Module):
    family = FAMILY

    def __init__(self, config: ChessformerConfig):
        super().__init__()
        self.config = config
        E = config.embed
        if config.input_dense:
            self.dense_input = nn.Linear(64 * 12, 64 * config.input_dense)
        self.embed = nn.Linear(PLANES + config.input_dense, E)
        self.gate_mult = nn.Parameter(torch.ones(64, E))  # per token, per channel
        self.gate_add = nn.Parameter(torch.zeros(64, E))
        self.layers = nn.ModuleList(EncoderLayer(config) for _ in range(config.layers))
        self.policy_embed = nn.Linear(E, E)
        self.policy = AttentionPolicyHead(E)
        self.soft_policy = AttentionPolicyHead(E)
        self.result = ValueHead(config, {"wdl": 3})
        reward = {"reward": 1, "buckets": config.reward_buckets, "error": 1}
        self.q = ValueHead(config, reward)
        self.short_term = ValueHead(config, reward)
        scale = torch.ones(PLANES)
        scale[RULE50_PLANE] = 0.01  # lc0 feeds the raw rule-50 count; the paper divides by 100
        self.register_buffer("input_scale", scale, persistent=False)
        self._init_weights()

    def _init_weights(self) -> None:
        """DeepNorm init: Xavier normal, gain beta = (8N)^-1/4 on V, output and FFN projections."""
        beta = (8 * self.config.layers) ** -0.25
        for layer in self.layers:
            nn.init.xavier_normal_(layer.attention.q.weight)
            nn.init.xavier_normal_(layer.attention.k.weight)
            for linear in (layer.attention.v, layer.attention.out, layer.ffn[0], layer.ffn[2]):
                nn.init.xavier_normal_(linear.weight, gain=beta)
            nn.init.zeros_(layer.attention.out.bias)
            nn.init.zeros_(layer.ffn[0].bias)
            nn.init.zeros_(layer.ffn[2].bias)

    # Inference on a CPU runs large batches in chunks: measured with bench/inference.py
    # (cf-6m, 2 cores), one batch of 256 ran at 105-111 positions/s and chunks of 64 at
    # 155, since a large batch's (B, H, 64, 64) intermediates fall out of the caches.
    CPU_INFERENCE_CHUNK = 64

    def forward(self, tokens: torch.Tensor, need_attention: bool = False) -> dict[str, torch.Tensor]:
        """tokens: (B, 64, 112) lc0 planes per square in the mover's frame.

        Returns logits and values; with ``need_attention`` also "attention",
        (B, layers, H, 64, 64) softmax weights in the mover's frame.
        """
        chunk = self.CPU_INFERENCE_CHUNK
        if tokens.shape[0] > chunk and tokens.device.type == "cpu" and not torch.is_grad_enabled():
            parts = [self._forward(part, need_attention) for part in tokens.split(chunk)]
            return {key: torch.cat([p[key] for p in parts]) for key in parts[0]}
        return self._forward(tokens, need_attention)

    def _forward(self, tokens: torch.Tensor, need_attention: bool) -> dict[str, torch.Tensor]:
        x = tokens * self.input_scale
        if self.config.input_dense:
            pieces = tokens[:, :, :12].transpose(1, 2).flatten(1)  # (B, 12 * T)
            dense = self.dense_input(pieces).view(tokens.shape[0], 64, self.config.input_dense)
            x = torch.cat([x, dense], dim=-1)
        x = self.embed(x) * self.gate_mult + self.gate_add  # (B, T, E)
        attention = []
        for layer in self.layers:
            x, weights = layer(x, need_attention)
            if need_attention:
                attention.append(weights)
        policy_tokens = F.mish(self.policy_embed(x))
        q, st = self.q(x), self.short_term(x)
        out = {
            "policy": self.policy(policy_tokens),
            "soft_policy": self.soft_policy(policy_tokens),
            "wdl": self.result(x)["wdl"],
            "q": torch.tanh(q["reward"]).squeeze(-1),
            "q_cat": q["buckets"],
            "q_err": torch.sigmoid(q["error"]).squeeze(-1),
            "st": torch.tanh(st["reward"]).squeeze(-1),
            "st_cat": st["buckets"],
            "st_err": torch.sigmoid(st["error"]).squeeze(-1),
        }
        if need_attention:
            out["attention"] = torch.stack(attention, dim=1)  # (B, L, H, T, T)
        return out


def build(config: dict | ChessformerConfig) -> Chessformer:
    if isinstance(config, dict):
        config = ChessformerConfig(**config)
    return Chessformer(config)


def preset(name: str, **overrides) -> ChessformerConfig:
    try:
        return replace(PRESETS[name], **overrides)
    except KeyError:
        raise ValueError(f"unknown chessformer preset {name!r}; choose from {', '.join(PRESETS)}") from None


def parameter_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


INPUT_ENCODING = INPUT_FORMAT
CONFIG_CLASS = ChessformerConfig


def make_evaluator(model: Chessformer, **kwargs):
    from analysis.inference import ChessformerEvaluator

    return ChessformerEvaluator(model, **kwargs)
