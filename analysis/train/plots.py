"""Loss-curve image for a run (matplotlib, headless)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def plot_curves(history: dict, path: Path) -> Path:
    """Train/validation total loss and the first of policy / value / action loss against the step."""
    present = {k for split in ("train", "val") for r in history.get(split, []) for k in r}
    second = next((k for k in ("policy", "value", "action") if k in present), "policy")
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, key in zip(axes, ("total", second)):
        for split, style in (("train", "-"), ("val", "o-")):
            rows = [r for r in history.get(split, []) if key in r]
            if rows:
                ax.plot([r["step"] for r in rows], [r[key] for r in rows], style, label=split, markersize=3)
        ax.set_xlabel("step")
        ax.set_ylabel(f"{key} loss")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
