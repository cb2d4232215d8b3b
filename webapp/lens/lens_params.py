"""A lens request's numbers from its query: required or defaulted, parsed and bounded, each refusal
a ``LensError`` sentence the API answers with 400 (``webapp.lens.lens`` and ``.neurons``)."""

from __future__ import annotations

import math

from analysis.lens import LensError


def number(query, name: str, cast=int, default=None):
    """``query[name]`` as ``cast`` (int or float), ``default`` when absent (required when None)."""
    text = query.get(name)
    if text in (None, ""):
        if default is None:
            raise LensError(f"{name} is required")
        return default
    try:
        value = cast(text)
    except (TypeError, ValueError):
        raise LensError(f"{name} must be a {'whole ' if cast is int else ''}number, not {text!r}") from None
    if cast is float and not math.isfinite(value):
        raise LensError(f"{name} must be a finite number")
    return value


def whole(query, name: str, default: int | None = None, low: int = 0, high: int | None = None) -> int:
    """A whole number of at least ``low`` (and at most ``high`` when given)."""
    value = number(query, name, int, default)
    if high is None and value < low:
        raise LensError(f"{name} must be {low} or more, not {value}")
    if high is not None and not low <= value <= high:
        raise LensError(f"{name} must be between {low} and {high}, not {value}")
    return value
