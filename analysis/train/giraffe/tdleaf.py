"""TD-Leaf(lambda) as section 4.5 of the paper.

Each iteration: roots (game positions with one random move applied); from each, ``moves``
half-moves of self-play with the probability-limited search, recording every search's
score from the root side's point of view. The root's error is the sum of the score changes,
the change after move m weighted by lambda^m (Table 2). The gradient is the evaluator's at
the leaf of the root search's principal variation (TD-Leaf: the local gradient of minimax is
the leaf's), on the L1 loss between the leaf's value and that value plus the error; one
optimiser step per iteration.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import chess
import torch

from analysis.evaluator import Evaluator
from analysis.search import Budget
from analysis.search.probability import ProbabilitySearch, ProbabilitySettings
from analysis.train.giraffe.value_evaluator import features_tensor


def td_error(scores: Sequence[float], lambda_: float) -> float:
    """sum over m >= 1 of lambda^m (s_m - s_(m-1)); ``scores`` from the root side's view."""
    return sum(lambda_ ** m * (scores[m] - scores[m - 1]) for m in range(1, len(scores)))


@dataclass
class Trajectory:
    leaf: chess.Board  # the root search's PV leaf
    sign: float  # +1 when the leaf has the root's side to move, else -1
    scores: list[float]  # search values in [-1, 1], root side's view, one per half-move searched
    error: float


def pv_leaf(root: chess.Board, pv: Sequence[chess.Move]) -> chess.Board:
    """The position at the end of ``pv`` (stopping at the first move that is not legal)."""
    leaf = root.copy(stack=False)
    for move in pv:
        if move not in leaf.legal_moves:
            break
        leaf.push(move)
    return leaf


def play_trajectory(root: chess.Board, search: ProbabilitySearch, moves: int, nodes: int,
                    lambda_: float) -> tuple[Trajectory | None, int]:
    """Self-play ``moves`` half-moves from ``root``: the trajectory (None when the root's leaf
    is a finished game) and the nodes searched."""
    board = root.copy(stack=False)
    scores: list[float] = []
    leaf, searched = None, 0
    for _ in range(moves):
        if board.is_game_over(claim_draw=False):
            break
        result = search.run(board, Budget(nodes=nodes))
        searched += result.nodes
        value = 2.0 * result.score - 1.0
        scores.append(value if board.turn == root.turn else -value)
        if leaf is None:
            leaf = pv_leaf(board, result.pv)
        board.push(result.best_move)
    if leaf is None or leaf.is_game_over(claim_draw=False):
        return None, searched
    sign = 1.0 if leaf.turn == root.turn else -1.0
    return Trajectory(leaf, sign, scores, td_error(scores, lambda_)), searched


def tdleaf_loss(model: torch.nn.Module, leaves: Sequence[chess.Board], signs: torch.Tensor,
                errors: torch.Tensor) -> torch.Tensor:
    """Mean L1 between each leaf's value (root side's view) and that value plus its error,
    the target kept inside the tanh's range [-1, 1]."""
    values = model.evaluator(features_tensor(leaves)) * signs  # (N,)
    target = (values.detach() + errors).clamp(-1.0, 1.0)
    return (values - target).abs().mean()


def tdleaf_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, trajectories: Sequence[Trajectory]) -> float:
    signs = torch.tensor([t.sign for t in trajectories])
    errors = torch.tensor([t.error for t in trajectories])
    model.train()
    loss = tdleaf_loss(model, [t.leaf for t in trajectories], signs, errors)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    model.eval()
    return loss.item()


def make_search(evaluator: Evaluator, max_qdepth: int = 16) -> ProbabilitySearch:
    return ProbabilitySearch(evaluator, ProbabilitySettings(max_qdepth=max_qdepth, tt_size=200_000,
                                                            cache_size=200_000))


def self_play(evaluator: Evaluator, roots: Sequence[chess.Board], moves: int, nodes: int,
              lambda_: float, progress=None, max_qdepth: int = 16) -> tuple[list[Trajectory], int]:
    """Trajectories of every root that gives one, and the nodes searched."""
    search = make_search(evaluator, max_qdepth)
    out, nodes_total = [], 0
    for root in roots:
        trajectory, searched = play_trajectory(root, search, moves, nodes, lambda_)
        nodes_total += searched
        if trajectory is not None:
            out.append(trajectory)
        if progress is not None:
            progress()
    return out, nodes_total
