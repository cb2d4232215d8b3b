"""Probability-limited search (Giraffe) against the depth-limited baseline at equal nodes."""

from __future__ import annotations

import chess

from analysis.evaluator import MaterialEvaluator
from analysis.search import Budget, ProbabilitySettings, run_search
from analysis.search.alphabeta import log_probabilities

# Qd8+ leaves black a single reply (Kh7); every other white move leaves about 20.
CHECK_LINE = "6k1/5pp1/7p/8/8/8/5PPP/3Q2K1 w - - 0 1"
NODES = 10_000


def _depths(name: str) -> tuple[dict[chess.Move, int], object]:
    board = chess.Board(CHECK_LINE)
    result = run_search(name, board, MaterialEvaluator(), budget=Budget(nodes=NODES))
    assert NODES <= result.nodes < NODES + 200
    return {r.move: r.depth for r in result.root}, result


def test_probability_search_goes_deeper_in_the_forcing_line_at_equal_nodes():
    check = chess.Move.from_uci("d1d8")
    depth_limited, ab = _depths("alphabeta")
    probability, pr = _depths("probability")
    # Depth-limited search reaches one depth everywhere.
    assert len(set(depth_limited.values())) == 1
    # Probability-limited search goes deeper than that in the check line...
    assert probability[check] > depth_limited[check]
    # ...and is selective: the quiet branches get less depth than the forcing one.
    quiet = [d for m, d in probability.items() if m != check]
    assert sum(quiet) / len(quiet) < probability[check]
    assert pr.extras["threshold"] < ProbabilitySettings().initial_threshold


def test_depth_budget_means_iterations_of_a_lower_threshold():
    board = chess.Board(CHECK_LINE)
    result = run_search("probability", board, MaterialEvaluator(), budget=Budget(depth=3))
    s = ProbabilitySettings()
    assert result.depth == 3
    assert result.extras["threshold"] == s.initial_threshold / s.threshold_factor ** 2


def test_children_split_the_parent_probability():
    board = chess.Board(CHECK_LINE)
    moves = list(board.legal_moves)
    uniform = log_probabilities(moves, {})
    assert all(abs(lp - uniform[0]) < 1e-12 for lp in uniform)
    policy = {m: (3.0 if i == 0 else 1.0) for i, m in enumerate(moves)}
    total = sum(policy.values())
    probs = [2.718281828459045 ** lp for lp in log_probabilities(moves, policy)]
    assert abs(sum(probs) - 1.0) < 1e-9
    assert abs(probs[0] - 3.0 / total) < 1e-9
