"""Probability-limited search (Lai, "Giraffe", sections 5.3-6).

The search boundary is a probability, not a depth: the root has probability
1, each node's probability is split among its children by the estimated
chance that the move is the best one (uniform without a model policy, the
network's policy with one), and a node whose probability falls below the
threshold is scored by quiescence search. Alpha-beta, the transposition table
and quiescence are shared with the depth-limited baseline; iterative
deepening lowers the threshold by ``threshold_factor`` per iteration (Giraffe's
code multiplies its root node budget by 4, i.e. divides the threshold by 4).

With a model policy (Giraffe's move evaluator, section 6) the split is Giraffe's: fixed
allocations for the hash move (3.0), a queen promotion that loses nothing (2.0001) and
captures that lose nothing by static exchange (2.0), and for every other move its policy
divided by the largest policy among those moves (at most 1); the allocations are normalised
to sum to 1 (the reference code's ``ann_move_evaluator``; the paper names the bonuses but not
their sizes). The code's killer-move multipliers and its static evaluator below 10,000 nodes
are not used: ``move_bonuses=False`` gives the plain normalised policy.

Budgets are kept in log space: r = ln(p) - ln(threshold), a node is expanded
while r >= 0, and a child gets r + ln P(child | parent). A UCI depth d means d
iterations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator

import chess

from analysis import search_catalogue as catalogue
from analysis.search.alphabeta import AlphaBetaCore, log_probabilities
from analysis.search.base import Budget
from analysis.search.see import see

HASH_MOVE, SAFE_QUEEN_PROMOTION, SAFE_CAPTURE = 3.0, 2.0001, 2.0


@dataclass
class ProbabilitySettings:
    """Thresholds: iteration k searches every node with probability >= initial / factor**(k-1)."""

    initial_threshold: float = 0.25
    threshold_factor: float = 4.0
    min_threshold: float = 1e-12
    max_qdepth: int = 16
    policy_ordering: bool = True
    move_bonuses: bool = True
    batch_successors: bool | None = None
    tt_size: int = 2_000_000
    cache_size: int = 1_000_000

    def __post_init__(self):
        if not 0 < self.initial_threshold <= 1:
            raise ValueError("initial_threshold must be in (0, 1]")
        if self.threshold_factor <= 1:
            raise ValueError("threshold_factor must be greater than 1")
        if not 0 < self.min_threshold <= self.initial_threshold:
            raise ValueError("min_threshold must be in (0, initial_threshold]")
        if self.max_qdepth < 0 or self.tt_size < 1 or self.cache_size < 1:
            raise ValueError("max_qdepth must be >= 0, tt_size and cache_size >= 1")


class ProbabilitySearch(AlphaBetaCore):
    spec = catalogue.PROBABILITY
    settings_type = ProbabilitySettings
    default_budget = Budget(nodes=20_000)

    def _iterations(self, budget: Budget) -> Iterator[tuple[int, float]]:
        s = self.settings
        threshold, iteration = s.initial_threshold, 1
        while threshold >= s.min_threshold and (budget.depth is None or iteration <= budget.depth):
            yield iteration, -math.log(threshold)
            threshold /= s.threshold_factor
            iteration += 1

    def _is_horizon(self, r: float) -> bool:
        return r < -1e-9

    def _child_budgets(self, board, moves, r, policy, hash_move=None) -> list[float]:
        if policy and self.settings.move_bonuses:
            allocations = move_allocations(board, moves, policy, hash_move)
            total = sum(allocations)
            return [r + math.log(max(a / total, 1e-30)) for a in allocations]
        return [r + lp for lp in log_probabilities(moves, policy)]

    def _iteration_extras(self, iteration: int, r: float) -> dict:
        s = self.settings
        return {"threshold": s.initial_threshold / s.threshold_factor ** (iteration - 1)}


def move_allocations(board: chess.Board, moves: list[chess.Move], policy: dict[chess.Move, float],
                     hash_move: chess.Move | None) -> list[float]:
    """Giraffe's unnormalised allocation of each move (see the module docstring)."""
    fixed: dict[chess.Move, float] = {}
    for move in moves:
        if move == hash_move:
            fixed[move] = HASH_MOVE
        elif move.promotion == chess.QUEEN and see(board, move) >= 0:
            fixed[move] = SAFE_QUEEN_PROMOTION
        elif board.is_capture(move) and see(board, move) >= 0:
            fixed[move] = SAFE_CAPTURE
    rest = [policy.get(m, 0.0) for m in moves if m not in fixed]
    top = max(rest, default=0.0)
    return [fixed[m] if m in fixed else (min(1.0, policy.get(m, 0.0) / top) if top > 0 else 1.0)
            for m in moves]
