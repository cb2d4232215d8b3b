"""Giraffe (Lai 2015): the evaluator and the move evaluator as one network of this family.

Input: the ``giraffe-363`` encoding, (B, 363 + 256 x 15). Output: ``value`` (B,) in [-1, 1]
for the side to move and ``policy`` (B, 256) logits of P(best move) for each legal move in
generation order (``policy_first``: the two-pass move evaluator's first pass, for training). A plain MLP: there are no attention maps.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from analysis.encoding.giraffe import INPUT_SIZE, MAX_MOVES, MOVE_FEATURES
from analysis.encoding.giraffe.features import BOARD_FEATURES
from analysis.models.giraffe.config import GiraffeConfig
from analysis.models.giraffe.evaluator_model import EvaluatorNet
from analysis.models.giraffe.move_model import NO_MOVE, MoveEvaluatorNet

FAMILY = "giraffe"


class Giraffe(nn.Module):
    family = FAMILY

    def __init__(self, config: GiraffeConfig):
        super().__init__()
        self.config = config
        self.evaluator = EvaluatorNet(config)
        self.move_evaluator = MoveEvaluatorNet(config)

    def forward(self, inputs: torch.Tensor, need_attention: bool = False,
                with_policy: bool = True) -> dict[str, torch.Tensor]:
        if inputs.shape[-1] != INPUT_SIZE:
            raise ValueError(f"Giraffe takes {INPUT_SIZE} input features, not {inputs.shape[-1]}")
        board = inputs[:, :BOARD_FEATURES]                                   # (B, 363)
        out = {"value": self.evaluator(board)}
        if with_policy:
            moves = inputs[:, BOARD_FEATURES:].view(-1, MAX_MOVES, MOVE_FEATURES)  # (B, 256, 15)
            # Only as many rows as the longest move list: positions have about 35 moves, not 256.
            used = max(1, int((moves[..., 0] > 0.5).sum(dim=-1).max()))
            policy, first = self.move_evaluator(board, moves[:, :used])          # (B, used)
            pad = (0, MAX_MOVES - used)
            out["policy"] = F.pad(policy, pad, value=NO_MOVE)                     # (B, 256)
            out["policy_first"] = F.pad(first, pad, value=NO_MOVE)
        return out


def build(config: dict | GiraffeConfig) -> Giraffe:
    if isinstance(config, dict):
        config = GiraffeConfig(**config)
    return Giraffe(config)
