"""The ``analysis.search`` implementation for a search name, and its budget.

The search object is built once per job (``search_class(name)(evaluator)``)
so the pipeline can call ``stop()`` on it when the job is cancelled.
"""

from __future__ import annotations

from analysis.search import registry
from analysis.search.base import Budget, Search
from webapp.analyses.searches import SEARCHES


def make_search(name: str, evaluator) -> Search:
    return registry.search_class(name)(evaluator)


def budget_for(name: str, budget: int) -> Budget:
    return Budget(**SEARCHES[name].budget_kwargs(budget))
