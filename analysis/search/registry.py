"""Searches by name, with their typed settings: the classes behind ``analysis.search_catalogue``."""

from __future__ import annotations

import dataclasses
import importlib
import typing
from typing import Any

import chess

from analysis.evaluator import Evaluator
from analysis.search_catalogue import search_spec
from analysis.search.base import Budget, ProgressCallback, Search, SearchResult


def search_class(name: str) -> type[Search]:
    """The class registered as ``name`` in the catalogue, imported on first use."""
    spec = search_spec(name)
    module, _, attribute = spec.implementation.partition(":")
    cls = getattr(importlib.import_module(module), attribute)
    if getattr(cls, "spec", None) is not spec:
        raise TypeError(f"{spec.implementation} does not carry the catalogue's entry for {name!r}")
    return cls


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
        elif option is str:
            if isinstance(raw, str):
                return raw
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
