"""A study's result as files: JSON (the whole result), CSV (one row per item, nested keys joined by
dots, lists as JSON), and each figure of its summary as PNG or SVG (matplotlib, Agg backend)."""

from __future__ import annotations

import csv
import io
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)


def to_json(result: dict) -> str:
    return json.dumps(result, sort_keys=True, indent=1)


def _flatten(row: dict, prefix: str = "") -> dict:
    flat = {}
    for key, value in row.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{name}."))
        elif isinstance(value, (list, tuple)):
            flat[name] = json.dumps(value)
        else:
            flat[name] = value
    return flat


def to_csv(result: dict) -> str:
    """One row per item; the columns are every key any item has, in first-seen order."""
    rows = [_flatten(item) for item in result["items"]]
    columns = list(dict.fromkeys(key for row in rows for key in row))
    out = io.StringIO()
    writer = csv.DictWriter(out, columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def figure(result: dict, name: str) -> dict:
    """The summary's figure called ``name`` (KeyError naming those there are)."""
    figures = result["summary"].get("figures", [])
    for fig in figures:
        if fig["name"] == name:
            return fig
    raise KeyError(f"no figure {name!r}: {', '.join(f['name'] for f in figures) or 'none'}")


def _draw(fig_spec: dict):
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    x = list(range(len(fig_spec["x"])))
    for series in fig_spec["series"]:
        y = [float("nan") if v is None else v for v in series["y"]]
        ax.plot(x, y, marker="o", label=series["label"])
        if series.get("low") and series.get("high"):
            low = [float("nan") if v is None else v for v in series["low"]]
            high = [float("nan") if v is None else v for v in series["high"]]
            ax.fill_between(x, low, high, alpha=0.2)
    ax.set_xticks(x, [str(v) for v in fig_spec["x"]], rotation=45, ha="right", fontsize=8)
    ax.set_title(fig_spec["title"], fontsize=10)
    if fig_spec.get("ylabel"):
        ax.set_ylabel(fig_spec["ylabel"])
    ax.axhline(0, color="grey", linewidth=0.5)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def figure_png(result: dict, name: str) -> bytes:
    fig = _draw(figure(result, name))
    out = io.BytesIO()
    fig.savefig(out, format="png", metadata={"Software": None})
    plt.close(fig)
    return out.getvalue()


def figure_svg(result: dict, name: str) -> str:
    fig = _draw(figure(result, name))
    out = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "sightline"}):  # the same ids each time: the same file
        fig.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    return out.getvalue()
