"""The evaluator network alone behind the Evaluator API, for self-play before the move
evaluator is trained: it computes only the 363 board features (not every legal move's), so
the search runs about twice as fast, and it offers no policy, so the probability-limited
search splits uniformly (section 5.3) rather than by an untrained move evaluator."""

from __future__ import annotations

from typing import Hashable, Sequence

import chess
import numpy as np
import torch

from analysis.encoding.giraffe.features import board_features
from analysis.evaluator import Capabilities, Evaluation, NoActionValues
from analysis.models.giraffe.compiled import CompiledGiraffe
from analysis.models.giraffe.decoding import value_to_expected_score


def features_tensor(boards: Sequence[chess.Board]) -> torch.Tensor:
    return torch.from_numpy(np.stack([board_features(b) for b in boards]))


class GiraffeValueEvaluator:
    name = "giraffe-evaluator"
    capabilities = Capabilities(policy=False, value=True)

    def __init__(self, model: torch.nn.Module):
        self.net = model.evaluator
        # The compiled evaluator (same values as ``self.net`` on the same weights, re-read after a step).
        self.value_only = CompiledGiraffe(model, self.name).value

    def evaluate(self, boards: Sequence[chess.Board], *, attention: bool = False,
                 temperature: float = 1.0) -> list[Evaluation]:
        values = [self.value_only(board) for board in boards]
        return [Evaluation(score=value_to_expected_score(v), extras={"value": v}) for v in values]

    def evaluate_actions(self, boards):
        raise NoActionValues("the Giraffe evaluator has no action values")

    def cache_key(self, board: chess.Board) -> Hashable:
        return board._transposition_key()
