"""One forward pass for concurrent requests: jobs running side by side share batches.

A worker with a threads pool runs several jobs at once. Each asks the same
network for small batches (a search's leaves, a value search's children).
``SharedBatcher`` lets one thread at a time run the network; requests that
arrive meanwhile wait and are merged into the next pass. Alone, a caller
goes straight through, so a solo worker pays nothing for it.
"""

from __future__ import annotations

from contextlib import contextmanager

import threading
from dataclasses import dataclass, field
from typing import Sequence

import chess

from analysis.evaluator import Evaluation, ForwardingEvaluator

MAX_POSITIONS = 512


@dataclass
class _Request:
    boards: list[chess.Board]
    attention: bool
    temperature: float
    result: list[Evaluation] | None = None
    error: BaseException | None = None
    done: bool = False
    options: tuple = field(init=False)

    def __post_init__(self):
        self.options = (self.attention, self.temperature)


class SharedBatcher(ForwardingEvaluator):
    """Wraps an Evaluator; ``evaluate`` may be called from many threads."""

    def __init__(self, inner, max_positions: int = MAX_POSITIONS):
        super().__init__(inner)
        self.max_positions = max_positions
        self._cond = threading.Condition()
        self._pending: list[_Request] = []
        self._busy = False
        self._owner: int | None = None  # the thread holding ``exclusive``
        self.requests = 0
        self.forward_passes = 0

    def evaluate(self, boards: Sequence[chess.Board], *, attention: bool = False,
                 temperature: float = 1.0) -> list[Evaluation]:
        if not boards:
            return []
        if self._owner == threading.get_ident():  # inside this thread's own ``exclusive`` block
            return self.inner.evaluate(boards, attention=attention, temperature=temperature)
        request = _Request(list(boards), attention, temperature)
        with self._cond:
            self._pending.append(request)
            self.requests += 1
            while not request.done and self._busy:
                self._cond.wait()
            if request.done:
                return self._outcome(request)
            self._busy = True
            batch = self._take(request)
        try:
            self._run(batch)
        finally:
            with self._cond:
                self._busy = False
                self._cond.notify_all()
        return self._outcome(request)

    @contextmanager
    def exclusive(self):
        """The wrapped evaluator for one caller alone (the lens hooks the shared network): waits
        for the running batch, and every other caller waits until the block ends. The holder's own
        ``evaluate`` calls go straight through (the decision timeline evaluates through its wrappers)."""
        with self._cond:
            while self._busy:
                self._cond.wait()
            self._busy = True
            self._owner = threading.get_ident()
        try:
            yield self.inner
        finally:
            with self._cond:
                self._owner = None
                self._busy = False
                self._cond.notify_all()

    def _take(self, leader: _Request) -> list[_Request]:
        """The leader's request plus waiting ones with the same options, up to ``max_positions``."""
        batch, size = [leader], len(leader.boards)
        for other in self._pending:
            if other is leader or other.options != leader.options:
                continue
            if size + len(other.boards) > self.max_positions:
                break
            batch.append(other)
            size += len(other.boards)
        for request in batch:
            self._pending.remove(request)
        return batch

    def _run(self, batch: list[_Request]) -> None:
        attention, temperature = batch[0].options
        boards = [board for request in batch for board in request.boards]
        try:
            results = self.inner.evaluate(boards, attention=attention, temperature=temperature)
            self.forward_passes += 1
            start = 0
            for request in batch:
                request.result = results[start:start + len(request.boards)]
                start += len(request.boards)
        except BaseException as exc:  # every caller sees the failure, not only the leader
            for request in batch:
                request.error = exc
        for request in batch:
            request.done = True

    @staticmethod
    def _outcome(request: _Request) -> list[Evaluation]:
        if request.error is not None:
            raise request.error
        return request.result
