"""Reading a run's TOML config: one place for the errors every config command gives."""

from __future__ import annotations

import tomllib
from dataclasses import fields
from pathlib import Path
from typing import Any, Iterable


def read_toml(path: str | Path, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The file's settings with the ``overrides`` that are not None (e.g. from the CLI) on top.
    ValueError names the file: missing or not valid TOML."""
    try:
        raw = tomllib.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ValueError(f"config file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: invalid TOML: {exc}") from None
    raw.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return raw


def check_settings(raw: dict[str, Any], config_type: type, path: str | Path, required: Iterable[str] = ()) -> None:
    """ValueError for a setting ``config_type`` does not have, or a required one that is missing."""
    unknown = sorted(set(raw) - {f.name for f in fields(config_type)})
    if unknown:
        raise ValueError(f"{path}: unknown setting(s): {', '.join(unknown)}")
    for key in required:
        if key not in raw:
            raise ValueError(f"{path}: missing required setting {key!r}")
