"""A finished study's summary as the page shows it: the table's cells in words (an interval as
"mean ± 2 s.e." or "score (low to high)"), and the drill-down rows (each position with its result)."""

from __future__ import annotations

from dataclasses import dataclass

from webapp.studies.models import Study, StudyItem

MAX_DRILL_ROWS = 500


def cell(value) -> str:
    """One table cell in words; an interval cell ``{"mean", "se"}`` is mean ± 2 s.e."""
    if isinstance(value, dict) and {"mean", "se"} <= value.keys():
        return f"{_num(value['mean'])} ± {_num(2 * value['se'])}"
    if isinstance(value, dict) and {"score", "low", "high"} <= value.keys():
        return f"{_num(value['score'])} ({_num(value['low'])} to {_num(value['high'])})"
    if isinstance(value, float):
        return _num(value)
    if value is None:
        return ""
    return str(value)


def _num(x) -> str:
    return "" if x is None else f"{x:.3g}" if isinstance(x, float) else str(x)


def table(summary: dict) -> tuple[list[str], list[list[str]]]:
    """(headers, rows of cells in words) of the summary's ``table``."""
    rows = summary.get("table") or []
    headers: list[str] = []
    for row in rows:
        headers += [key for key in row if key not in headers]
    return headers, [[cell(row.get(key)) for key in headers] for row in rows]


@dataclass(frozen=True)
class DrillRow:
    index: int
    id: str
    fen: str
    kept: bool
    cells: list[str]


def drill_down(study: Study) -> tuple[list[str], list[DrillRow]]:
    """(headers, rows): every stored item with its position, its scalar results as cells."""
    items = list(StudyItem.objects.filter(study=study).order_by("index")[:MAX_DRILL_ROWS])
    headers: list[str] = []
    for item in items:
        headers += [k for k, v in item.result.items() if _scalar(v) and k not in headers and k not in ("kept", "index", "id")]
    rows = []
    for item in items:
        ident, fen = study.position(item.index, item.result)
        rows.append(DrillRow(item.index, ident, fen, item.result.get("kept", True) is not False,
                             [cell(item.result.get(k)) for k in headers]))
    return headers, rows


def _scalar(value) -> bool:
    return value is None or isinstance(value, (str, int, float, bool)) or (
        isinstance(value, dict) and ({"mean", "se"} <= value.keys() or {"score", "low", "high"} <= value.keys()))


def figures(study: Study) -> list[dict]:
    """The summary's figures: {name, title}."""
    return [{"name": f["name"], "title": f.get("title", f["name"])}
            for f in ((study.result or {}).get("summary") or {}).get("figures", [])]


def full_result(study: Study) -> dict:
    """``run_study``'s answer again: the stored summary with the stored items in index order."""
    items = [item.result for item in StudyItem.objects.filter(study=study).order_by("index")]
    return {**(study.result or {}), "items": items}
