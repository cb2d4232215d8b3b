"""The values a ``DisplayedValue`` policy (``analysis.displayed_value``) shows, for evaluated boards."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import replace
from typing import Sequence

import chess

from analysis.displayed_value import QUIESCENCE, STATIC, DisplayedValue, ShownValue
from analysis.evaluator import Evaluation, Evaluator, ForwardingEvaluator
from analysis.search.quiescence import Quiescence


def position_valuer(policy: DisplayedValue, evaluator: Evaluator) -> "PositionValuer":
    """The object that turns ``evaluator``'s evaluations into ``policy``'s shown values (one per job:
    it keeps the quiescence cache, which the job's positions share)."""
    return StaticValuer() if policy.is_static else QuiescenceValuer(evaluator)


class PositionValuer(ABC):
    """Shown values for evaluated boards; ``evaluator(inner)`` wraps an evaluator so that its
    evaluations carry the shown value as their score (for code that values successors itself)."""

    @abstractmethod
    def shown(self, boards: Sequence[chess.Board], evaluations: Sequence[Evaluation]) -> list[ShownValue]:
        """One shown value per evaluated board."""

    def evaluator(self, inner: Evaluator) -> Evaluator:
        return ShownValueEvaluator(inner, self)


class StaticValuer(PositionValuer):
    def shown(self, boards, evaluations) -> list[ShownValue]:
        return [ShownValue(float(ev.score), ev.wdl, STATIC.name) for ev in evaluations]

    def evaluator(self, inner: Evaluator) -> Evaluator:
        return inner


class QuiescenceValuer(PositionValuer):
    def __init__(self, evaluator: Evaluator):
        self._search = Quiescence(evaluator)

    def shown(self, boards, evaluations) -> list[ShownValue]:
        out = []
        for board, ev in zip(boards, evaluations):
            q = self._search.value(board)
            # The network's WDL (if it had one) is of the static position: it is not the shown value's.
            out.append(ShownValue(q.score, None, QUIESCENCE.name, static_score=float(ev.score), nodes=q.nodes))
        return out


class ShownValueEvaluator(ForwardingEvaluator):
    """``inner``'s evaluations with the shown value as their score (policy and extras as they were)."""

    def __init__(self, inner: Evaluator, valuer: PositionValuer):
        super().__init__(inner)
        self.valuer = valuer

    def evaluate(self, boards, *, attention: bool = False, temperature: float = 1.0) -> list[Evaluation]:
        evaluations = self.inner.evaluate(boards, attention=attention, temperature=temperature)
        return [replace(ev, score=shown.score, wdl=shown.wdl)
                for ev, shown in zip(evaluations, self.valuer.shown(boards, evaluations))]
