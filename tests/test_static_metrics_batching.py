"""The value agent's action accuracy shares forward passes across positions and gives the same figures."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.eval.prefetch import PREFETCH_BATCH, PrefetchedEvaluator
from analysis.eval.static_metrics import VALUE_PREFETCH_POSITIONS, StaticReport, evaluate_static, kendall_tau_b
from analysis.search import run_search
from tests.test_value_quality import opera_boards
from tests.value_evaluators import ScoreEvaluator, material_score


class Counting:
    """Counts forward passes (evaluate calls) and boards of the evaluator it wraps."""

    def __init__(self, evaluator):
        self.evaluator, self.calls, self.boards = evaluator, 0, 0

    def __getattr__(self, name):
        return getattr(self.evaluator, name)

    def evaluate(self, boards, **kwargs):
        self.calls += 1
        self.boards += len(boards)
        return self.evaluator.evaluate(boards, **kwargs)


def positions():
    """Opera game positions with 'Stockfish' values made up from material plus a move-dependent term."""
    out = []
    for board in opera_boards():
        truth = {}
        for i, move in enumerate(board.legal_moves):
            board.push(move)
            truth[move] = 1.0 - material_score(board) + 0.001 * (i % 3)
            board.pop()
        out.append((board, truth))
    return out


def one_search_per_position(evaluator, items) -> StaticReport:
    """The figures as the value agent defines them, one search per position (no sharing)."""
    correct, taus = 0, []
    for board, truth in items:
        scores = {r.move: r.score for r in run_search("value", board, evaluator).root}
        moves = list(truth)
        predicted = np.asarray([scores[m] for m in moves])
        target = np.asarray([truth[m] for m in moves])
        correct += truth[moves[int(np.argmax(predicted))]] >= target.max()
        taus.append(kendall_tau_b(predicted, target))
    return StaticReport(len(items), correct / len(items), float(np.mean(taus)))


def test_value_agent_figures_are_unchanged_with_fewer_forward_passes():
    items = positions()
    evaluator = Counting(ScoreEvaluator(lambda board: 0.9 * material_score(board) + 0.001 * (board.ply() % 7)))
    shared = evaluate_static(evaluator, "value", items)
    calls, boards = evaluator.calls, evaluator.boards
    evaluator.calls = evaluator.boards = 0
    plain = one_search_per_position(evaluator, items)
    assert (shared.positions, shared.action_accuracy) == (plain.positions, plain.action_accuracy)
    assert shared.kendall_tau == pytest.approx(plain.kendall_tau)
    assert evaluator.calls == len(items)  # one forward pass per position before
    blocks = -(-len(items) // VALUE_PREFETCH_POSITIONS)
    assert calls <= boards // PREFETCH_BATCH + blocks < len(items)  # now full batches per block of positions
    assert boards <= evaluator.boards  # and no board evaluated twice within a block


def test_network_figures_match_one_search_per_position(tiny_checkpoint):
    from analysis.checkpoint import load_evaluator

    items = positions()[:4]
    network = load_evaluator(tiny_checkpoint, device="cpu")
    shared, plain = evaluate_static(network, "value", items), one_search_per_position(network, items)
    assert shared.action_accuracy == plain.action_accuracy
    assert shared.kendall_tau == pytest.approx(plain.kendall_tau, abs=1e-6)


def test_prefetched_evaluator_evaluates_each_distinct_position_once():
    counting = Counting(ScoreEvaluator(material_score))
    cached = PrefetchedEvaluator(counting, batch=4)
    boards = opera_boards()[:10]
    cached.prefetch(boards + boards[:3])
    assert (counting.calls, counting.boards) == (3, 10)  # 10 distinct boards in batches of 4
    assert [e.score for e in cached.evaluate(boards[:5])] == [material_score(b) for b in boards[:5]]
    assert counting.boards == 10  # answered from the store
    cached.clear()
    cached.evaluate(boards[:2])
    assert counting.boards == 12
