"""Probability-limited search (Lai, "Giraffe", sections 5.3-6).

The search boundary is a probability, not a depth: the root has probability
1, each node's probability is split among its children by the estimated
chance that the move is the best one (uniform without a model policy, the
network's policy with one), and a node whose probability falls below the
threshold is scored by quiescence search. Alpha-beta, the transposition table
and quiescence are shared with the depth-limited baseline; iterative
deepening lowers the threshold by ``threshold_factor`` per iteration (Giraffe's
code multiplies its root node budget by 4, i.e. divides the threshold by 4).

Budgets are kept in log space: r = ln(p) - ln(threshold), a node is expanded
while r >= 0, and a child gets r + ln P(child | parent). A UCI depth d means d
iterations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator

from analysis.search.alphabeta import AlphaBetaCore, log_probabilities
from analysis.search.base import Budget


@dataclass
class ProbabilitySettings:
    """Thresholds: iteration k searches every node with probability >= initial / factor**(k-1)."""

    initial_threshold: float = 0.25
    threshold_factor: float = 4.0
    min_threshold: float = 1e-12
    max_qdepth: int = 16
    policy_ordering: bool = True
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
    name = "probability"
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

    def _child_budgets(self, board, moves, r, policy) -> list[float]:
        return [r + lp for lp in log_probabilities(moves, policy)]

    def _iteration_extras(self, iteration: int, r: float) -> dict:
        s = self.settings
        return {"threshold": s.initial_threshold / s.threshold_factor ** (iteration - 1)}
