"""Concurrent evaluate() calls share forward passes and get their own results back."""

import threading
import time

import chess
import pytest

from analysis.evaluator import MaterialEvaluator
from workers.batching import SharedBatcher


class Slow(MaterialEvaluator):
    """A material evaluator whose forward pass takes a while, recording batch sizes."""

    def __init__(self):
        self.batches = []

    def evaluate(self, boards, **kwargs):
        self.batches.append(len(boards))
        time.sleep(0.02)
        return super().evaluate(boards, **kwargs)


def positions(n: int, seed: int) -> list[chess.Board]:
    """``n`` distinct positions along a pseudo-random line (different per seed)."""
    board, out = chess.Board(), []
    for i in range(n):
        moves = list(board.legal_moves)
        board.push(moves[(seed * 7 + i * 3) % len(moves)])
        out.append(board.copy())
    return out


def test_concurrent_callers_share_passes_and_get_their_own_results():
    inner = Slow()
    shared = SharedBatcher(inner)
    reference = MaterialEvaluator()
    errors, calls_per_thread = [], 6

    def worker(seed):
        try:
            for i in range(calls_per_thread):
                boards = positions(3 + (seed + i) % 3, seed + i)
                got = shared.evaluate(boards)
                want = reference.evaluate(boards)
                assert [g.score for g in got] == [w.score for w in want]
                assert [g.policy for g in got] == [w.policy for w in want]
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert shared.requests == 4 * calls_per_thread
    assert shared.forward_passes == len(inner.batches) < shared.requests  # merged
    assert max(inner.batches) > 5  # some pass carried more than one caller's boards


def test_alone_it_is_a_pass_through():
    inner = Slow()
    shared = SharedBatcher(inner)
    boards = positions(4, 0)
    assert [e.score for e in shared.evaluate(boards)] == [e.score for e in MaterialEvaluator().evaluate(boards)]
    assert inner.batches == [4] and shared.evaluate([]) == []
    assert shared.name == "material" and not shared.capabilities.policy  # attributes come from the wrapped evaluator


def test_a_failure_reaches_every_caller_in_the_pass():
    class Broken(Slow):
        def evaluate(self, boards, **kwargs):
            time.sleep(0.05)
            raise RuntimeError("out of memory")

    shared = SharedBatcher(Broken())
    failures = []

    def call():
        try:
            shared.evaluate(positions(2, 1))
        except RuntimeError as exc:
            failures.append(str(exc))

    threads = [threading.Thread(target=call) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == ["out of memory"] * 3


@pytest.mark.parametrize("options", [{"attention": True}, {"temperature": 0.5}])
def test_requests_with_other_options_are_not_merged(options):
    inner = Slow()
    shared = SharedBatcher(inner)
    shared._busy = True  # simulate a pass in progress while two requests queue up
    results = {}

    def call(name, kwargs):
        results[name] = shared.evaluate(positions(2, 0), **kwargs)

    a = threading.Thread(target=call, args=("plain", {}))
    b = threading.Thread(target=call, args=("other", options))
    a.start(); b.start()
    time.sleep(0.05)
    with shared._cond:
        shared._busy = False
        shared._cond.notify_all()
    a.join(); b.join()
    assert inner.batches == [2, 2] and len(results) == 2


def test_the_exclusive_holder_evaluates_straight_through_while_others_wait():
    inner = Slow()
    shared = SharedBatcher(inner)
    other_done = threading.Event()
    other = threading.Thread(target=lambda: (shared.evaluate(positions(2, 1)), other_done.set()))
    with shared.exclusive():
        other.start()
        assert len(shared.evaluate(positions(3, 0))) == 3  # the holder's own call: no deadlock
        time.sleep(0.05)
        assert not other_done.is_set() and inner.batches == [3]  # the other caller waits
    other.join(timeout=5)
    assert other_done.is_set() and inner.batches == [3, 2]
