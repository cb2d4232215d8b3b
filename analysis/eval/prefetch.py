"""An evaluator wrapper that answers from evaluations made ahead of time in large batches.

The value agent evaluates one position's successors per forward pass (about
30 boards). Over a test split that is thousands of small passes; prefetching
the successors of several positions at once gives full-size batches, and the
``cache_key`` lets transpositions share one evaluation. Searches run unchanged
on top of it, so their results are the same as without it.
"""

from __future__ import annotations

from typing import Hashable, Sequence

import chess

from analysis.evaluator import Evaluation, ForwardingEvaluator

PREFETCH_BATCH = 256  # boards per forward pass (Chessformer runs CPU batches over 64 in chunks of 64)


class PrefetchedEvaluator(ForwardingEvaluator):
    """Serves ``evaluate`` from a store filled by ``prefetch``; anything missing is evaluated on demand."""

    def __init__(self, evaluator, batch: int = PREFETCH_BATCH):
        super().__init__(evaluator)
        self.evaluator = evaluator
        self.batch = batch
        self._store: dict[Hashable, Evaluation] = {}

    def prefetch(self, boards: Sequence[chess.Board]) -> None:
        """Evaluate every board not already stored, ``batch`` at a time, each distinct key once."""
        todo: dict[Hashable, chess.Board] = {}
        for board in boards:
            key = self.cache_key(board)
            if key not in self._store:
                todo.setdefault(key, board)
        keys, pending = list(todo), list(todo.values())
        for start in range(0, len(pending), self.batch):
            evaluations = self.evaluator.evaluate(pending[start:start + self.batch])
            self._store.update(zip(keys[start:start + self.batch], evaluations))

    def evaluate(self, boards: Sequence[chess.Board], *, attention: bool = False,
                 temperature: float = 1.0) -> list[Evaluation]:
        if attention or temperature != 1.0:  # the store holds plain evaluations only
            return self.evaluator.evaluate(boards, attention=attention, temperature=temperature)
        self.prefetch(boards)
        return [self._store[self.cache_key(board)] for board in boards]

    def clear(self) -> None:
        self._store.clear()
