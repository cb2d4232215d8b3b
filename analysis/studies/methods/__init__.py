"""The study methods, registered by name: ``register``, ``get``, ``names``.

One module per method (``forgotten``, ``lookahead``, and those other modules add); each defines a
``StudyMethod`` subclass and registers one instance at import. ``METHOD_MODULES`` lists the modules
this package loads on first use, so a method is found by name without its caller importing it.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from analysis.studies.catalogue import MethodAbout, get_about
from analysis.studies.errors import StudyInputError
from analysis.studies.positions import Item

# Loaded on first lookup; a method in a module not listed here registers when its module is imported.
METHOD_MODULES = ["forgotten", "lookahead", "probe", "heads", "knowing_doing"]

_REGISTRY: dict[str, "StudyMethod"] = {}
_loaded = False


@dataclass
class StudyContext:
    """What a method sees of its run: the spec, its parsed ``settings``, the network (``evaluator``
    and its lens ``adapter``), and ``state`` for what ``prepare`` loads (a sparring net, an engine)."""

    spec: Any
    settings: Any
    evaluator: Any
    adapter: Any
    threads: int | None = None
    state: dict[str, Any] = field(default_factory=dict)

    def rng(self, item: Item) -> np.random.Generator:
        """The item's own generator: the same draws for (seed, item.index) in any run or order."""
        return np.random.default_rng([self.spec.seed, item.index])


class StudyMethod(ABC):
    """One kind of measurement over a position set. Its title, settings (a dataclass type: the
    fields with their defaults) and why-not come from the torch-free catalogue entry of its ``name``
    (``analysis.studies.catalogue``), which the site reads without loading the method."""

    name: str = ""

    @property
    def about(self) -> MethodAbout:
        return get_about(self.name)

    @property
    def title(self) -> str:
        return self.about.title

    @property
    def settings(self) -> type:
        return self.about.settings

    def why_not(self, adapter) -> str | None:
        """None when the method applies to this network (its lens ``adapter``), else the sentence why not."""
        return self.about.why_not(adapter)

    def prepare(self, context: StudyContext) -> None:
        """Once per run, before any item (load a sparring net, start an engine): StudyInputError on bad input."""

    def close(self, context: StudyContext) -> None:
        """Once per run, after the last item or on stopping (stop an engine)."""

    def load_sparring(self, context: StudyContext) -> None:
        """The settings' sparring network into ``context.state["sparring"]`` (StudyInputError without one)."""
        from analysis.studies.networks import load_network  # torch: only when a run prepares

        if not context.settings.sparring:
            raise StudyInputError(f"the {self.name} method needs a sparring network (--sparring NAME): the weaker "
                                  "net that makes a puzzle hard")
        context.state["sparring"], _, _ = load_network(context.settings.sparring, device=str(context.evaluator.device))

    @abstractmethod
    def measure(self, context: StudyContext, item: Item) -> dict:
        """The item's result (JSON-able; deterministic given (seed, item.index)); may be
        {"kept": False, "reason": ...}."""

    @abstractmethod
    def summarise(self, context: StudyContext, results: list[dict]) -> dict:
        """{"table": [...], "figures": [...], ...method-specific keys} from every item's result."""


def register(method: StudyMethod) -> StudyMethod:
    _REGISTRY[method.name] = method
    return method


def _load() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in METHOD_MODULES:
            importlib.import_module(f"analysis.studies.methods.{module}")


def get(name: str) -> StudyMethod:
    _load()
    if name not in _REGISTRY:
        raise StudyInputError(f"unknown study method {name!r}: one of {', '.join(names())}")
    return _REGISTRY[name]


def names() -> list[str]:
    _load()
    return sorted(_REGISTRY)
