"""The searches users can pick, and the budget each one takes.

The algorithms live in ``analysis.search``; this is only what the form offers
and how a budget number becomes an ``analysis.search.base.Budget``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SearchSpec:
    name: str
    label: str
    budget_unit: str  # "nodes", "depth" or "" (fixed work)
    budget_min: int
    budget_max: int
    budget_default: int
    needs_policy: bool

    @property
    def fixed(self) -> bool:
        return not self.budget_unit

    def nodes_per_position(self, budget: int) -> int:
        """Search nodes one position costs at this budget: the node budget itself; for a depth,
        alpha-beta's measured growth (about 2,500 nodes at depth 3, 25,000 at depth 4)."""
        if self.budget_unit == "nodes":
            return budget
        if self.budget_unit == "depth":
            return 25 * 10 ** (budget - 1)
        return 1

    def budget_kwargs(self, budget: int) -> dict[str, int]:
        """Keyword arguments for ``analysis.search.base.Budget``."""
        return {self.budget_unit: budget} if self.budget_unit else {"nodes": 1}


SEARCHES: dict[str, SearchSpec] = {spec.name: spec for spec in (
    SearchSpec("policy", "Policy (the network's top move, no search)", "", 1, 1, 1, True),
    SearchSpec("value", "Value (best move by 1-ply value)", "", 1, 1, 1, False),
    SearchSpec("mcts", "MCTS (PUCT)", "nodes", 1, 20_000, 200, True),
    SearchSpec("gumbel", "Gumbel MuZero (sequential halving)", "nodes", 2, 20_000, 64, True),
    SearchSpec("probability", "Probability search", "nodes", 1, 20_000, 200, True),
    SearchSpec("alphabeta", "Alpha-beta (network value at the leaves)", "depth", 1, 6, 2, False),
)}

DEFAULT_SEARCH = "value"

# One job's bound: positions x nodes per position. About 10 to 20 minutes for the shipped
# cf-small on one CPU core (MCTS at 1,000-2,000 nodes/s), far less on a GPU; a job runs under
# a lease (webapp.analyses.lease), so a longer one would still run once, but one submission
# should not hold a worker for hours.
MAX_JOB_NODES = 1_000_000


def job_nodes(spec: SearchSpec, budget: int, positions: int) -> int:
    return spec.nodes_per_position(budget) * positions
