"""Reliability diagram (PNG) of a value-quality report: predicted vs Stockfish, per bin."""

from __future__ import annotations

from pathlib import Path


def plot_reliability(report: dict, path: Path, title: str = "") -> Path:
    """Mean Stockfish win probability against mean predicted score per bin, overall and per source.

    The diagonal is perfect calibration; the lower panel shows how many
    positions fell in each bin (log scale), so sparse bins are not over-read.
    """
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on a server
    import matplotlib.pyplot as plt

    groups = {"all": report["overall"], **report["by_source"]}
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 7.5), height_ratios=[3, 1], sharex=True)
    top.plot([0, 1], [0, 1], color="grey", linestyle=":", label="perfect calibration")
    width = 0.1 / (len(groups) + 1)
    for i, (name, figures) in enumerate(groups.items()):
        filled = [b for b in figures["calibration"] if b["count"]]
        top.plot([b["mean_predicted"] for b in filled], [b["mean_target"] for b in filled], marker="o",
                 linewidth=2 if name == "all" else 1, label=f"{name} (n={figures['positions']}, "
                                                           f"ECE {figures['ece']:.3f})")
        bottom.bar([b["lo"] + (i + 0.5) * width for b in figures["calibration"]],
                   [b["count"] for b in figures["calibration"]], width=width, label=name)
    top.set(xlim=(0, 1), ylim=(0, 1), ylabel="Stockfish win probability (mean in bin)",
            title=title or "Value calibration, side to move")
    top.legend(loc="upper left", fontsize=8)
    bottom.set(xlabel="predicted expected score (side to move)", ylabel="positions", yscale="log")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
