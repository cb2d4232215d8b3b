"""A toy model family for the tests: registering a family takes this one module plus one line.

A linear action-value network over lc0 planes: no policy, no WDL, no attention,
but action values, so it exercises every branch ``Capabilities`` opens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import chess
import numpy as np
import torch
from torch import nn

from analysis.encoding import INPUT_FORMAT, POLICY_SIZE, Encoding
from analysis.evaluator import Evaluation
from analysis.models.family import Capabilities, ModelFamily

NAME = "toy-actions"


@dataclass(frozen=True)
class ToyConfig:
    hidden: int = 4


class ToyNet(nn.Module):
    family = NAME

    def __init__(self, config: ToyConfig):
        super().__init__()
        self.config = config
        self.body = nn.Linear(64 * 112, config.hidden)
        self.value = nn.Linear(config.hidden, 1)
        self.actions = nn.Linear(config.hidden, POLICY_SIZE)

    def forward(self, tokens: torch.Tensor, need_attention: bool = False) -> dict[str, torch.Tensor]:
        h = torch.tanh(self.body(tokens.flatten(1)))  # (B, hidden)
        return {"value": self.value(h).squeeze(-1), "actions": self.actions(h)}  # (B,), (B, 1858)


def decode(out, boards: Sequence[chess.Board], encoding: Encoding, *, temperature=1.0, attention=False,
           name=NAME) -> list[Evaluation]:
    return [Evaluation(score=float(1 / (1 + np.exp(-out["value"][i])))) for i in range(len(boards))]


def decode_actions(out, boards: Sequence[chess.Board], encoding: Encoding, *, name=NAME):
    result = []
    for i, board in enumerate(boards):
        moves, indices = encoding.legal_moves(board)
        scores = 1 / (1 + np.exp(-out["actions"][i][indices].astype(np.float64)))
        result.append(dict(zip(moves, scores.tolist())))
    return result


@dataclass(frozen=True)
class ToyLossWeights:
    value: float = 1.0


def losses(outputs, batch, weights: ToyLossWeights):
    value = ((outputs["value"] - batch["q"]) ** 2).mean()
    return {"value": value, "total": weights.value * value}


FAMILY = ModelFamily(
    name=NAME, config_type=ToyConfig, presets={"toy": ToyConfig()}, encodings=(INPUT_FORMAT,),
    build=lambda config: ToyNet(config), capabilities=lambda config: Capabilities(action_values=True),
    decode=decode, loss_weights=ToyLossWeights, losses=losses, default_preset="toy",
    decode_actions=decode_actions,
)
