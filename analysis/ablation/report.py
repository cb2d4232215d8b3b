"""The ablation's section of docs/ablations.md, its loss-curve picture and each variant's card, all
rebuilt from the stored measurements (``python -m analysis ablation table``)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from analysis.ablation.config import AblationConfig  # noqa: E402
from analysis.ablation.measure import export_path, measure_argv  # noqa: E402
from analysis.ablation.summary import (Summary, atlas_cells, match_cell, metrics_cells, puzzles_cell, sts_cell,  # noqa: E402
                                       summarise, training_cell, val_loss_cell, value_cell)

NOT_MEASURED = "not measured"


def picture_path(cfg: AblationConfig) -> Path:
    return cfg.doc.parent / "img" / f"ablation-{cfg.name}.png"


def plot_losses(cfg: AblationConfig, summaries: list[Summary]) -> Path:
    """Training and validation loss of every variant against the step, one line each."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, split in zip(axes, ("train", "val")):
        for s in summaries:
            rows = [r for r in s.history.get(split, []) if "total" in r]
            ax.plot([r["step"] for r in rows], [r["total"] for r in rows], "-" if split == "train" else "o-",
                    markersize=3, label=s.variant.name)
        ax.set_title(f"{cfg.name}: {'training' if split == 'train' else 'validation'} loss")
        ax.set_xlabel("step")
        ax.set_ylabel("total loss (each variant's own target)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    path = picture_path(cfg)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def _cells(cfg: AblationConfig, s: Summary) -> list[str]:
    train = s.variant.train
    overrides = ", ".join(f"{k} = {v}" for k, v in train.model_overrides.items()) or "preset"
    row = [f"`{s.variant.name}`", "; ".join(filter(None, [overrides, s.variant.budget])), training_cell(s),
           val_loss_cell(s)]
    measured = {"puzzles": puzzles_cell(s), "sts": sts_cell(s)}
    for measure in ("puzzles", "sts"):
        if measure in cfg.measures:
            row.append(measured[measure] or NOT_MEASURED)
    if "metrics" in cfg.measures:
        row.extend(metrics_cells(s) or (NOT_MEASURED, NOT_MEASURED))
    if {"value_quality", "value_sanity"} & set(cfg.measures):
        no_value = all(measure_argv(cfg, s.variant, m) is None for m in ("value_quality", "value_sanity"))
        row.append("no value head" if no_value else value_cell(s) or NOT_MEASURED)
    if "heads" in cfg.measures:
        row.extend(atlas_cells(s) or (NOT_MEASURED, NOT_MEASURED))
    if "match" in cfg.measures:
        row.append(match_cell(s) or NOT_MEASURED)
    return row


def _header(cfg: AblationConfig) -> list[str]:
    head = ["variant", "differs by", "training", "final val loss"]
    head += [h for m, h in (("puzzles", f"puzzles ({cfg.puzzles.name})"), ("sts", "STS")) if m in cfg.measures]
    if "metrics" in cfg.measures:
        head += ["action accuracy, test split", "Kendall tau-b"]
    if {"value_quality", "value_sanity"} & set(cfg.measures):
        head.append("value (test split; sanity suite)")
    if "heads" in cfg.measures:
        head += ["labelled heads per layer (atlas; from L0)", "most important head (causal)"]
    if "match" in cfg.measures:
        head.append("Elo vs Stockfish 1350 (95%); games")
    return head


def render_section(cfg: AblationConfig, config_path: str) -> str:
    """The ablation's section: setup, the measured table (trained variants only), the picture, the paper."""
    summaries = [s for s in (summarise(cfg, v) for v in cfg.variants) if s is not None]
    lines = [f"## {cfg.title}", ""]
    if cfg.summary:
        lines += [cfg.summary.strip(), ""]
    lines += [f"Regenerate: `python -m analysis ablation table {config_path}`; rebuild: "
              f"`python -m analysis ablation run {config_path}`. Agents: "
              + ", ".join(f"`{v.name}` {v.algo}" for v in cfg.variants) + f"; measured on `{cfg.data}`'s test split.", ""]
    coverage = _coverage(cfg)
    if coverage:
        lines += [f"Training positions: {coverage['train_positions']:,}, {coverage['with_action_values']:,} with action "
                  f"values ({coverage['every_move_annotated']:,} with every legal move's), read by every variant.", ""]
    if not summaries:
        lines += ["No variant has been trained on this machine yet.", ""]
    else:
        head = _header(cfg)
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(_cells(cfg, s)) + " |" for s in summaries]
        picture = plot_losses(cfg, summaries)
        lines += ["", f"![{cfg.name} loss curves]({os.path.relpath(picture, cfg.doc.parent)})", ""]
        missing = [v.name for v in cfg.variants if all(s.variant.name != v.name for s in summaries)]
        if missing:
            lines += [f"Not trained yet: {', '.join(missing)}.", ""]
    p = cfg.paper
    lines += [f"**The paper** ({p.source}; {p.scale}): {p.finding.strip()}", ""]
    return "\n".join(lines)


def coverage_path(cfg: AblationConfig) -> Path:
    return cfg.store / "dataset.json"


def _coverage(cfg: AblationConfig) -> dict | None:
    path = coverage_path(cfg)
    return json.loads(path.read_text()) if path.exists() else None


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- ablation:{name} -->", f"<!-- /ablation:{name} -->"


def write_section(cfg: AblationConfig, config_path: str) -> Path:
    """Replace (or append) the ablation's section of its doc, between its markers; written atomically."""
    start, end = _markers(cfg.name)
    block = f"{start}\n{render_section(cfg, config_path)}{end}\n"
    text = cfg.doc.read_text() if cfg.doc.exists() else "# Ablations\n\n"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end) + r"\n?", re.S)
    text = pattern.sub(lambda _: block, text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + block
    cfg.doc.parent.mkdir(parents=True, exist_ok=True)
    tmp = cfg.doc.with_name(cfg.doc.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, cfg.doc)
    return cfg.doc


def write_card(cfg: AblationConfig, s: Summary, config_path: str) -> Path:
    """A short card beside the variant's export: what it is, how it was trained, what was measured, how."""
    train, p = s.variant.train, s.provenance
    path = export_path(cfg, s.variant).with_suffix(".md")
    lines = [f"# {cfg.name} / {s.variant.name}", "",
             f"One variant of the ablation \"{cfg.title}\" (`{config_path}`, `docs/ablations.md`). Trained from "
             f"`{s.variant.config}`: family `{train.family}`, preset `{train.model}`"
             + "".join(f", {k} = {v}" for k, v in train.model_overrides.items())
             + f", {p.get('parameters', 0):,} parameters; {training_cell(s)}"
             f" ({p.get('train_rows', 0):,} training samples in `{p.get('data')}`); final validation loss "
             f"{val_loss_cell(s)}.", "", "## Measured", ""]
    head, row = _header(cfg)[4:], _cells(cfg, s)[4:]
    lines += [f"- {h}: {c}" for h, c in zip(head, row)]
    lines += ["", "## Commands", "", "Each result is the JSON the command printed, kept in "
              f"`{cfg.store / s.variant.name}/`:", ""]
    lines += [f"    python -m analysis {' '.join(argv)}" for argv in
              (measure_argv(cfg, s.variant, m) for m in cfg.measures) if argv is not None]
    path.write_text("\n".join(lines) + "\n")
    return path
