"""The searches users can pick (the catalogue, ``analysis.search_catalogue``) and the site's
bound on one job's work.

The algorithms live in ``analysis.search``; their names, labels and budget ranges in the
catalogue, which the form, the worker and the networks app all read.
"""

from __future__ import annotations

from analysis.search_catalogue import DEFAULT_SEARCH, SEARCHES, SearchSpec

__all__ = ["DEFAULT_SEARCH", "MAX_JOB_NODES", "SEARCHES", "SearchSpec", "job_nodes"]

# One job's bound: positions x nodes per position. A job runs under a lease
# (webapp.jobs.run.lease), so a longer one would still run once, but one submission
# should not hold a worker for hours.
MAX_JOB_NODES = 1_000_000


def job_nodes(spec: SearchSpec, budget: int, positions: int) -> int:
    return spec.nodes_per_position(budget) * positions
