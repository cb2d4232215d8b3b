"""The game page's feature panels, registered by their apps so that the jobs app imports none.

A feature app (the lens, the lc0 comparison, later the lab) registers, in its ``AppConfig.ready``,
a function that gives the settings its panel needs for a job; ``job_page`` puts each under its key in
the page's data. A panel that does not apply to the job answers None.
"""

from __future__ import annotations

from typing import Any, Callable

PanelSettings = Callable[[Any], Any]

_panels: dict[str, PanelSettings] = {}


def register(key: str, settings: PanelSettings) -> None:
    """``settings(job)`` becomes ``page[key]`` on every job page."""
    _panels[key] = settings


def panel_settings(job) -> dict[str, Any]:
    return {key: settings(job) for key, settings in _panels.items()}
