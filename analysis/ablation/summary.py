"""One variant's stored measurements and training record reduced to the figures the table and card print."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from analysis.ablation.config import AblationConfig, Variant
from analysis.ablation.measure import export_path, history_path, load_results
from analysis.checkpoint_file import read_header
from analysis.heads.patterns import UNLABELLED


@dataclass(frozen=True)
class Summary:
    variant: Variant
    provenance: dict  # the export's training record
    history: dict  # the run's train/val loss rows
    results: dict  # measure -> the JSON its command printed

    @property
    def final_val(self) -> dict:
        return self.history["val"][-1] if self.history.get("val") else {}


def summarise(cfg: AblationConfig, variant: Variant) -> Summary | None:
    """None while the variant has no stored export (not trained yet)."""
    if not export_path(cfg, variant).exists() or not history_path(cfg, variant).exists():
        return None
    meta, _ = read_header(export_path(cfg, variant))
    history = json.loads(history_path(cfg, variant).read_text())
    return Summary(variant, meta.provenance or {}, history, load_results(cfg, variant))


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def training_cell(s: Summary) -> str:
    p = s.provenance
    stopped = " (time limit)" if p.get("stopped_by_time_limit") else ""
    where = f" on {p['hardware']}" if p.get("hardware") else ""
    earlier = p.get("init_from") or {}
    before = ""
    if earlier.get("steps"):  # a run continued from an earlier one's export (a lease's cap cut it short)
        on = f" on {earlier['hardware']}" if earlier.get("hardware") else ""
        before = f"{earlier['steps']:,} steps{on}, then "
    return (f"{before}{p.get('steps', 0):,} steps x {p.get('batch_size', 0)}, {p.get('wall_seconds', 0) / 60:.1f} min"
            f"{where}{stopped}")


def val_loss_cell(s: Summary) -> str:
    v = s.final_val
    if "total" not in v:
        return "no validation split"
    top1 = f", policy top-1 {pct(v['policy_top1'])}" if "policy_top1" in v else ""
    return f"{v['total']:.3f}{top1}"


def puzzles_cell(s: Summary) -> str | None:
    r = s.results.get("puzzles")
    return None if r is None else f"{pct(r['accuracy'])} ({r['solved']}/{r['total']})"


def sts_cell(s: Summary) -> str | None:
    r = s.results.get("sts")
    return None if r is None else f"{r['score']:,} / {r['maximum']:,}"


def metrics_cells(s: Summary) -> tuple[str, str] | None:
    r = s.results.get("metrics")
    return None if r is None else (f"{pct(r['action_accuracy'])} (n={r['positions']:,})", f"{r['kendall_tau']:.3f}")


def value_cell(s: Summary) -> str | None:
    """MAE and ECE against Stockfish on the test split, and the sanity verdict."""
    quality, sanity = s.results.get("value_quality"), s.results.get("value_sanity")
    parts = []
    if quality is not None:
        parts.append(f"MAE {quality['overall']['mae']:.3f}, ECE {quality['overall']['ece']:.3f}")
    if sanity is not None:
        passed = sum(c["passed"] for c in sanity["checks"])
        parts.append(f"sanity {'passed' if sanity['passed'] else 'failed'} {passed}/{len(sanity['checks'])}")
    return "; ".join(parts) or None


def match_cell(s: Summary) -> str | None:
    """The match against Stockfish 1350: Elo difference with its 95% interval, and the games' record."""
    r = s.results.get("match")
    if r is None:
        return None
    low, high = r["ci95"]
    return f"{r['elo_diff']:+.0f} ({low:+.0f} to {high:+.0f}); +{r['wins']} ={r['draws']} -{r['losses']}"


def atlas_cells(s: Summary) -> tuple[str, str] | None:
    """Labelled heads per layer (``L0: 2/8 (bishop-moves x2)``) and the head whose removal moves the
    policy most (the causal atlas's mean KL; the score change for a value-only net). Layers and heads
    count from 0, as everywhere (docs/lens.md)."""
    r = s.results.get("heads")
    if r is None:
        return None
    layers = []
    for i, row in enumerate(r["labels"]):
        found = Counter(label for label in row if label != UNLABELLED)
        named = ", ".join(f"{k} x{n}" if n > 1 else k for k, n in sorted(found.items()))
        layers.append(f"L{i}: {sum(found.values())}/{len(row)}" + (f" ({named})" if named else ""))
    return "; ".join(layers), _most_important(r)


def _most_important(r: dict) -> str:
    importance = r.get("importance") or {}
    key, what = ("kl", "KL") if importance.get("kl") is not None else ("score", "abs. d score")
    grid = importance.get(key)
    if grid is None:
        return "not computed"
    layer, head = max(((l, h) for l in range(len(grid)) for h in range(len(grid[l]))), key=lambda lh: grid[lh[0]][lh[1]])
    return f"L{layer} H{head} {r['labels'][layer][head]}, {what} {grid[layer][head]:.3f}"
