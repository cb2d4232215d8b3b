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

import torch
import torch.nn.functional as F
from torch import nn

from analysis.encoding.lc0_planes import PLANES, RULE50_PLANE
from analysis.models.chessformer.config import ChessformerConfig
from analysis.models.chessformer.encoder import EncoderLayer
from analysis.models.chessformer.heads import AttentionPolicyHead, ValueHead

FAMILY = "chessformer"


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

    # Inference on a CPU runs large batches in chunks: a large batch's (B, H, 64, 64)
    # intermediates fall out of the caches (bench/inference.py --batches 64 256 compares them).
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


def parameter_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
