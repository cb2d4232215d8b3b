"""The probability-limited search with Giraffe's move evaluator and fixed move allocations."""

import math

import chess
import pytest
import torch

from analysis.evaluator import MaterialEvaluator
from analysis.models.inference import make_evaluator
from analysis.models import get_family
from analysis.search import Budget, run_search
from analysis.search.probability import ProbabilitySearch, ProbabilitySettings, move_allocations
from analysis.search.see import see

# White: Rxe5 loses the rook to d6xe5 (SEE -400), Bxb7 wins a pawn for nothing, b7-b8=Q is safe.
POSITION = "4k3/1p5P/3p4/4p3/8/8/6B1/4RK2 w - - 0 1"


def giraffe_evaluator():
    torch.manual_seed(0)
    family = get_family("giraffe")
    return make_evaluator(family.build(family.preset("giraffe-2015")), device="cpu")


def test_static_exchange():
    board = chess.Board(POSITION)
    assert see(board, chess.Move.from_uci("e1e5")) == -400
    assert see(board, chess.Move.from_uci("g2b7")) == 100
    assert see(board, chess.Move.from_uci("h7h8q")) == 875


def test_fixed_allocations_and_policy_shares():
    board = chess.Board(POSITION)
    moves = list(board.legal_moves)
    policy = {m: 0.01 for m in moves}
    quiet = chess.Move.from_uci("f1f2")
    policy[quiet] = 0.04
    hash_move = chess.Move.from_uci("g2f3")
    alloc = dict(zip(moves, move_allocations(board, moves, policy, hash_move)))
    assert alloc[hash_move] == 3.0
    assert alloc[chess.Move.from_uci("h7h8q")] == 2.0001
    assert alloc[chess.Move.from_uci("g2b7")] == 2.0
    assert alloc[quiet] == 1.0  # the largest policy among the unbonused moves
    assert alloc[chess.Move.from_uci("e1e5")] == pytest.approx(0.25)  # a losing capture: policy share


def test_search_splits_budget_by_the_move_evaluator():
    ev = giraffe_evaluator()
    board = chess.Board(POSITION)
    moves = list(board.legal_moves)
    policy = ev.evaluate([board])[0].policy
    search = ProbabilitySearch(ev)
    budgets = search._child_budgets(board, moves, 0.0, policy, None)
    alloc = move_allocations(board, moves, policy, None)
    probs = [math.exp(b) for b in budgets]
    assert sum(probs) == pytest.approx(1.0)
    assert probs == pytest.approx([a / sum(alloc) for a in alloc])
    plain = ProbabilitySearch(ev, ProbabilitySettings(move_bonuses=False))._child_budgets(board, moves, 0.0, policy)
    assert [math.exp(b) for b in plain] == pytest.approx([policy[m] for m in moves])
    # Without a policy (material count) the split stays uniform (section 5.3).
    uniform = ProbabilitySearch(MaterialEvaluator())._child_budgets(board, moves, 0.0, {}, None)
    assert all(b == pytest.approx(-math.log(len(moves))) for b in uniform)


def test_search_runs_with_the_giraffe_evaluator():
    ev = giraffe_evaluator()
    board = chess.Board(POSITION)
    result = run_search("probability", board, ev, budget=Budget(nodes=300))
    assert result.best_move in board.legal_moves and result.nodes >= 300
