"""Chessformer heads: the attention policy (lc0's 1858 moves) and the value heads (Appendix A-C).

Shapes: B batch, T = 64 tokens, E embedding.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from analysis.encoding.policy_index import PROMOTION_PIECES, vocabulary
from analysis.models.chessformer.config import ChessformerConfig


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
