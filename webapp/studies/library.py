"""The one place the site calls ``analysis.studies`` (spec B of issue 38): positions, methods, a run
and the exports, each imported inside its function. The web process checks a submission with the
torch-free parts (``analysis.studies.catalogue``: each method's title, settings and why not); only
``run`` loads ``run_study`` and the methods, which import torch, and only the worker calls it
(tests/test_web_process_imports.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

# The kinds of position source a study may be given here ("games": mined from the master games by the
# study's own network in the worker, so they are counted there, not at submission).
KINDS = ("puzzles", "csv", "pgn", "fens", "games")
MINED = "games"
MAX_SOURCE_BYTES = 1_000_000  # an upload or a paste, whole: the home form's PGN bound
MAX_LIMIT = 2000


class StudyInput(Exception):
    """Input a study cannot take: ``message`` is one sentence for the user."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Source:
    """A position source as the site stores it (``Study.source_*``)."""

    kind: str
    name: str = ""
    text: str = ""
    limit: int | None = None

    def missing(self) -> str:
        """What the source lacks to be read ("" when nothing): a shipped set's name, or a text."""
        if self.kind == "puzzles" and not self.name:
            return "Positions of kind puzzles need the shipped set's name."
        if self.kind not in ("puzzles", MINED) and not self.text.strip():
            return f"Positions of kind {self.kind} need a text (paste it, or upload a file)."
        return ""

    def library(self):
        from analysis.studies import PositionSource

        if self.kind == "puzzles":
            return PositionSource("puzzles", path=self.name, limit=self.limit)
        if self.kind == MINED:
            return PositionSource(MINED, limit=self.limit)
        return PositionSource(self.kind, text=self.text, limit=self.limit)


def _input_error() -> type[Exception]:
    from analysis.studies import StudyInputError

    return StudyInputError


def read_items(source: Source) -> list:
    """The source's positions (``analysis.studies.read_positions``); raises ``StudyInput``."""
    from analysis.studies import read_positions

    try:
        items = read_positions(source.library())
    except _input_error() as exc:
        raise StudyInput(str(exc)) from None
    if not items:
        raise StudyInput("The position set has no positions.")
    return items


def method_choices() -> list[tuple[str, str]]:
    """(name, title) of every study method."""
    from analysis.studies import catalogue

    return [(name, catalogue.get_about(name).title) for name in catalogue.names()]


def method(name: str):
    """The method's ``MethodAbout`` (``analysis.studies.catalogue``); an unknown name: ``StudyInput``."""
    from analysis.studies import catalogue

    if name not in catalogue.names():
        raise StudyInput(f"Unknown method {name!r}; the methods are {', '.join(catalogue.names())}.")
    return catalogue.get_about(name)


def parse_settings(name: str, settings: Mapping[str, Any]) -> dict:
    """The settings as the method's dataclass reads them (unknown keys, wrong types: ``StudyInput``)."""
    from analysis.studies.spec import parse_settings as parse

    found = method(name)
    try:
        parse(found.settings, settings, found.name)
    except _input_error() as exc:
        raise StudyInput(str(exc)) from None
    return dict(settings)


def takes_sparring(name: str) -> bool:
    """Whether the method plays a second, weaker network (a ``sparring`` setting: lookahead's)."""
    return method(name).takes_sparring


def why_not(name: str, description) -> str | None:
    """Why the method does not apply to a network, read from its stored lens description (the web
    process loads no checkpoint; the worker asks the real adapter again before it runs)."""
    return description.why_not("lens") or method(name).why_not(description)


def run(spec_fields: dict, *, done: Mapping[int, dict], on_item: Callable, on_progress: Callable,
        should_stop: Callable[[], bool], threads: int, device: str | None) -> dict:
    """``analysis.studies.run_study`` on a spec; raises ``Stopped`` when ``should_stop`` stopped it."""
    from analysis.studies import StudySpec, StudyStopped, run_study

    try:
        return run_study(StudySpec(**spec_fields), done=done, on_item=on_item, on_progress=on_progress,
                         should_stop=should_stop, threads=threads, device=device)
    except StudyStopped:
        raise Stopped() from None
    except _input_error() as exc:
        raise StudyInput(str(exc)) from None


class Stopped(Exception):
    """The run stopped between items (cancelled, or its lease was lost)."""


def export(kind: str, result: dict, figure: str | None = None) -> str | bytes:
    """JSON, CSV, or a figure as PNG/SVG (``analysis.studies.export``); an unknown figure: ``StudyInput``."""
    from analysis.studies import export as exports

    if kind == "json":
        return exports.to_json(result)
    if kind == "csv":
        return exports.to_csv(result)
    names = [f["name"] for f in (result.get("summary") or {}).get("figures", [])]
    if figure not in names:
        raise StudyInput(f"No figure {figure!r}; this study has {', '.join(names) or 'none'}.")
    return exports.figure_png(result, figure) if kind == "png" else exports.figure_svg(result, figure)


def shipped_sets() -> list[str]:
    """The names of the shipped puzzle sets a study may read (``PositionSource("puzzles", name)``)."""
    from analysis.studies.positions import shipped_puzzle_sets

    return list(shipped_puzzle_sets())
