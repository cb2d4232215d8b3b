"""Searches by name, with their typed settings."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import chess

from analysis.evaluator import Evaluator
from analysis import search_names as names
from analysis.search.alphabeta import AlphaBeta, AlphaBetaSettings
from analysis.search.base import Budget, ProgressCallback, Search, SearchResult
from analysis.search.gumbel import GumbelMuZero, GumbelSettings
from analysis.search.mcts import MCTS, MCTSSettings
from analysis.search.policy import PolicySearch, PolicySettings
from analysis.search.probability import ProbabilitySearch, ProbabilitySettings
from analysis.search.value import ValueSearch, ValueSettings

SEARCHES: dict[str, type[Search]] = {
    cls.name: cls for cls in (PolicySearch, ValueSearch, MCTS, GumbelMuZero, ProbabilitySearch, AlphaBeta)
}
SEARCH_NAMES = tuple(SEARCHES)
if SEARCH_NAMES != names.SEARCH_NAMES:
    raise ImportError(f"analysis.search_names lists {names.SEARCH_NAMES}; the registry has {SEARCH_NAMES}")
SettingsType = (PolicySettings | ValueSettings | MCTSSettings | GumbelSettings | ProbabilitySettings
                | AlphaBetaSettings)


def search_class(name: str) -> type[Search]:
    try:
        return SEARCHES[name]
    except KeyError:
        raise ValueError(f"unknown search {name!r}; choose one of {', '.join(SEARCH_NAMES)}") from None


def make_settings(name: str, values: dict[str, Any] | None = None) -> Any:
    """Settings for search ``name`` from plain values (e.g. a form or JSON), type-checked.

    Unknown keys and values of the wrong type raise ``ValueError`` with the field's name.
    """
    cls = search_class(name).settings_type
    values = dict(values or {})
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise ValueError(f"unknown {name} setting(s): {', '.join(unknown)}; "
                         f"known: {', '.join(fields)}")
    converted = {}
    for key, raw in values.items():
        converted[key] = _coerce(key, raw, hints[key])
    try:
        return cls(**converted)
    except TypeError as exc:
        raise ValueError(str(exc)) from None


def _coerce(key: str, raw: Any, hint: Any) -> Any:
    options = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, type(int | None)) else (hint,)
    if raw is None and type(None) in options:
        return None
    for option in options:
        if option is bool:
            if isinstance(raw, bool):
                return raw
            if isinstance(raw, str) and raw.lower() in ("true", "false", "1", "0", "yes", "no", "on", "off"):
                return raw.lower() in ("true", "1", "yes", "on")
        elif option is int:
            if isinstance(raw, int) and not isinstance(raw, bool):
                return raw
            if isinstance(raw, str):
                try:
                    return int(raw)
                except ValueError:
                    pass
        elif option is float:
            if isinstance(raw, (int, float)) and not isinstance(raw, bool):
                return float(raw)
            if isinstance(raw, str):
                try:
                    return float(raw)
                except ValueError:
                    pass
    raise ValueError(f"setting {key}: {raw!r} is not a valid {hint}")


def make_search(name: str, evaluator: Evaluator, settings: Any = None) -> Search:
    """A reusable search object (keeps its tree / table between ``run`` calls)."""
    cls = search_class(name)
    if isinstance(settings, dict):
        settings = make_settings(name, settings)
    return cls(evaluator, settings)


def run_search(name: str, board: chess.Board, evaluator: Evaluator, settings: Any = None, *,
               budget: Budget | None = None, progress: ProgressCallback | None = None) -> SearchResult:
    """Run search ``name`` once on ``board`` and return its result (see the package docstring)."""
    return make_search(name, evaluator, settings).run(board, budget, progress)
