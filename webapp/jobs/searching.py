"""The ``analysis.search`` implementation for a search name, and its budget, both read from
the catalogue (``analysis.search_catalogue``).

The search object is built once per job (``search_class(name)(evaluator)``)
so the runner can call ``stop()`` on it when the job is cancelled.
"""

from __future__ import annotations

from analysis.search.base import Budget, Search
from analysis.search.registry import search_class
from analysis.search_catalogue import search_spec


def make_search(name: str, evaluator) -> Search:
    return search_class(name)(evaluator)


def budget_for(name: str, budget: int) -> Budget:
    return Budget(**search_spec(name).budget_kwargs(budget))
