"""Gumbel MuZero: completed Q-values, the improved policy and sequential halving's budget."""

from __future__ import annotations

import math
from typing import Hashable, Sequence

import chess
import numpy as np
import pytest

from analysis.evaluator import Capabilities, Evaluation, MaterialEvaluator, centipawns_to_score
from analysis.search import Budget, GumbelMuZero, GumbelSettings
from analysis.search.gumbel import considered_visit_sequence, halving_levels

# White: Kh1 and Rb1 -> a handful of legal moves, none ending the game.
FEW_MOVES = "k7/8/8/8/8/8/6p1/1R5K w - - 0 1"


class ScriptedEvaluator:
    """Known values for chosen positions, a chosen root policy; uniform elsewhere."""

    name = "scripted"
    capabilities = Capabilities(policy=True, value=True, wdl=False)

    def __init__(self, values: dict[str, float], root_fen: str, root_policy: dict[chess.Move, float]):
        self.values = values
        self.root_fen = root_fen
        self.root_policy = root_policy

    def evaluate(self, boards: Sequence[chess.Board], *, attention=False, temperature=1.0):
        out = []
        for board in boards:
            moves = list(board.legal_moves)
            if board.fen() == self.root_fen:
                policy = dict(self.root_policy)
            else:
                policy = {m: 1.0 / len(moves) for m in moves} if moves else {}
            out.append(Evaluation(score=self.values.get(board.fen(), 0.5), policy=policy))
        return out

    def cache_key(self, board: chess.Board) -> Hashable:
        return board.fen()


def _setup(seed_values: list[float], policy_weights: list[float]):
    root = chess.Board(FEW_MOVES)
    moves = list(root.legal_moves)
    values, policy = {}, {}
    total = sum(policy_weights[i % len(policy_weights)] for i in range(len(moves)))
    for i, move in enumerate(moves):
        root.push(move)
        values[root.fen()] = seed_values[i % len(seed_values)]  # the opponent's expected score
        root.pop()
        policy[move] = policy_weights[i % len(policy_weights)] / total
    return root, moves, ScriptedEvaluator(values, root.fen(), policy), policy


def _sigma(q: np.ndarray, visits: np.ndarray, value_scale=0.1, maxvisit_init=50.0) -> np.ndarray:
    lo, hi = q.min(), q.max()
    return (maxvisit_init + visits.max()) * value_scale * (q - lo) / max(hi - lo, 1e-8)


def test_final_action_is_the_argmax_of_completed_q_and_improved_policy_matches():
    root, moves, evaluator, policy = _setup([0.8, 0.3, 0.6, 0.45, 0.9, 0.2, 0.7], [5.0, 1.0, 1.0])
    # One visit per action: Q(a) is minus the successor's value, in [-1, 1].
    search = GumbelMuZero(evaluator, GumbelSettings(gumbel_scale=0.0, max_considered_actions=64))
    result = search.run(root, Budget(nodes=1 + len(moves)))
    q = np.array([-(2 * evaluator.values[_after(root, m).fen()] - 1) for m in moves])
    stats = {r.move: r for r in result.root}
    assert all(stats[m].visits == 1 for m in moves)
    expected = moves[int(np.argmax(q))]
    # The prior favours other moves; the completed Q wins.
    assert max(policy, key=policy.get) != expected
    assert result.best_move == expected
    logits = np.log([policy[m] for m in moves])
    x = logits + _sigma(q, np.ones(len(moves)))
    improved = np.exp(x - x.max())
    improved /= improved.sum()
    got = np.array([result.extras["improved_policy"][m] for m in moves])
    assert got == pytest.approx(improved, abs=1e-9)
    assert got.sum() == pytest.approx(1.0)


def test_unvisited_actions_are_completed_with_the_mixed_value():
    root, moves, evaluator, policy = _setup([0.8, 0.3, 0.6, 0.45, 0.9, 0.2, 0.7], [1.0])
    visited_count = 3
    search = GumbelMuZero(evaluator, GumbelSettings(gumbel_scale=0.0, max_considered_actions=64))
    result = search.run(root, Budget(nodes=1 + visited_count))
    stats = {r.move: r for r in result.root}
    visited = [m for m in moves if stats[m].visits]
    assert len(visited) == visited_count
    q_visited = {m: -(2 * evaluator.values[_after(root, m).fen()] - 1) for m in visited}
    raw = 2 * 0.5 - 1  # the root's own value
    p = np.array([policy[m] for m in visited])
    weighted = float((p * np.array([q_visited[m] for m in visited])).sum() / p.sum())
    mixed = (raw + visited_count * weighted) / (visited_count + 1)
    q = np.array([q_visited.get(m, mixed) for m in moves])
    visits = np.array([stats[m].visits for m in moves], dtype=float)
    expected = _sigma(q, visits)
    got = np.array([result.extras["completed_q"][m] for m in moves])
    assert got == pytest.approx(expected, abs=1e-9)
    assert result.best_move == max(visited, key=q_visited.get)


def _mctx_visit_counts(max_considered: int, simulations: int) -> list[int]:
    """Per-action visits when each simulation picks an action with the scheduled visit count."""
    counts = [0] * max_considered
    for wanted in considered_visit_sequence(max_considered, simulations):
        counts[counts.index(wanted)] += 1
    return sorted(counts, reverse=True)


def test_sequential_halving_schedule_matches_the_paper():
    # n = 64, m = 16: log2(16) = 4 phases of 16 simulations: 16 x 1, 8 x 2, 4 x 4, 2 x 8.
    assert _mctx_visit_counts(16, 64) == [15, 15, 7, 7, 3, 3, 3, 3] + [1] * 8
    assert sum(take for _, take in halving_levels(16, 200)) == 200
    assert [w for w, _ in halving_levels(4, 8)] == [4, 2, 2]


@pytest.mark.parametrize("simulations", [64, 200])
def test_sequential_halving_spends_the_budget_as_scheduled(simulations):
    board = chess.Board()  # 20 legal moves, 16 considered
    search = GumbelMuZero(MaterialEvaluator(), GumbelSettings(seed=3, batch_size=16))
    result = search.run(board, Budget(nodes=1 + simulations))
    visits = sorted((r.visits for r in result.root), reverse=True)
    assert sum(visits) == simulations
    assert visits[:16] == _mctx_visit_counts(16, simulations)
    assert visits[16:] == [0, 0, 0, 0]
    # The move played is one of the two survivors of the last halving.
    top = {r.move for r in result.root if r.visits == visits[0]}
    assert result.best_move in top


def test_gumbel_noise_is_reproducible_with_a_seed():
    board = chess.Board()
    a = GumbelMuZero(MaterialEvaluator(), GumbelSettings(seed=7)).run(board, Budget(nodes=40))
    b = GumbelMuZero(MaterialEvaluator(), GumbelSettings(seed=7)).run(board, Budget(nodes=40))
    assert a.best_move == b.best_move
    assert [r.visits for r in a.root] == [r.visits for r in b.root]


def test_value_prediction_drives_the_choice_with_a_material_evaluator():
    board = chess.Board("rnb1kbnr/ppp1pppp/8/3q4/8/2N5/PPPP1PPP/R1BQKBNR w KQkq - 0 3")
    result = GumbelMuZero(MaterialEvaluator(), GumbelSettings(seed=0, max_considered_actions=64)).run(
        board, Budget(nodes=200))
    assert result.best_move == chess.Move.from_uci("c3d5")
    assert result.score == pytest.approx(
        max(r.q for r in result.root if r.q is not None), abs=1e-9)
    assert result.score > centipawns_to_score(500)
    assert math.isclose(sum(result.extras["improved_policy"].values()), 1.0)


def _after(board: chess.Board, move: chess.Move) -> chess.Board:
    b = board.copy()
    b.push(move)
    return b
