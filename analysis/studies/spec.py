"""What a study is: (method, network, positions, settings, seed), as ``StudySpec``; and the typed
settings each method declares, parsed here once (unknown keys and wrong types are input errors)."""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from typing import Any, Mapping

from analysis.studies.errors import StudyInputError
from analysis.studies.positions import PositionSource


@dataclass(frozen=True)
class StudySpec:
    """``model``: a checkpoint path or a shipped network's name (``maia-1900``)."""

    method: str
    model: str
    positions: PositionSource
    settings: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 0

    def to_json(self) -> dict:
        return {"method": self.method, "model": self.model, "positions": self.positions.to_json(),
                "settings": dict(self.settings), "seed": self.seed}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "StudySpec":
        return cls(data["method"], data["model"], PositionSource.from_json(data["positions"]),
                   dict(data.get("settings") or {}), int(data.get("seed", 0)))


def parse_settings(kind: type, given: Mapping[str, Any] | None, method: str) -> Any:
    """``given`` as an instance of the settings dataclass ``kind`` (defaults for absent keys)."""
    given = dict(given or {})
    fields = {f.name: f for f in dataclasses.fields(kind)}
    unknown = sorted(set(given) - set(fields))
    if unknown:
        raise StudyInputError(f"the {method} method has no setting {unknown[0]!r} "
                              f"(its settings: {', '.join(fields) or 'none'})")
    hints = typing.get_type_hints(kind)
    for name, value in given.items():
        given[name] = _coerce(name, value, hints[name], method)
    return kind(**given)


def _coerce(name: str, value: Any, hint: Any, method: str) -> Any:
    """Ints for int, ints or floats for float, str for str, None where the type allows it."""
    allowed = typing.get_args(hint) or (hint,)
    if value is None and type(None) in allowed:
        return None
    for kind in allowed:
        if kind is bool and isinstance(value, bool):
            return value
        if kind is int and isinstance(value, int) and not isinstance(value, bool):
            return value
        if kind is float and isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if kind is str and isinstance(value, str):
            return value
    names = " or ".join(getattr(k, "__name__", str(k)) for k in allowed)
    raise StudyInputError(f"the {method} method's setting {name!r} must be {names}, not {value!r}")
