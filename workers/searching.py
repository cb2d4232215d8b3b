"""Find the ``analysis.search`` implementation for a search name.

The searches live in ``analysis.search``; each is a ``Search`` subclass with a
``name``. They are found by scanning that package's modules, so a new search
needs no change here.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from analysis.search.base import Budget, Search
from webapp.analyses.searches import SEARCHES


@lru_cache(maxsize=1)
def search_classes() -> dict[str, type[Search]]:
    import analysis.search as package

    found: dict[str, type[Search]] = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Search) and value is not Search \
                    and isinstance(getattr(value, "name", None), str):
                found.setdefault(value.name, value)
    return found


def make_search(name: str, evaluator) -> Search:
    classes = search_classes()
    if name not in classes:
        raise ValueError(f"search {name!r} is not available in analysis.search (have: {', '.join(sorted(classes))})")
    return classes[name](evaluator)


def budget_for(name: str, budget: int) -> Budget:
    return Budget(**SEARCHES[name].budget_kwargs(budget))
