"""Measured metrics in a checkpoint's metadata: attach them, and render them for a model card."""

from __future__ import annotations

from pathlib import Path

from analysis.checkpoint import load_checkpoint, read_header, save_checkpoint

# Card rows: (label, metric-name stem). Names follow `attach-metrics --result NAME=...`:
# puzzles_policy, sts_value, metrics_policy, match_policy_vs_sf1350, baseline_puzzles, ...
AGENTS = [("policy agent (argmax policy)", "policy"), ("value agent (depth 1)", "value"),
          ("material-greedy 1-ply baseline", "baseline")]


def attach_metrics(path: Path, metrics: dict) -> dict:
    """Merge ``metrics`` into the checkpoint's metadata (weights untouched); returns the merged dict."""
    meta, _ = read_header(path)
    model, meta = load_checkpoint(path)
    merged = {**meta.metrics, **metrics}
    save_checkpoint(path, model, trained=meta.trained, provenance=meta.provenance, metrics=merged)
    return merged


def _name(kind: str, stem: str) -> str:
    return f"baseline_{kind}" if stem == "baseline" else f"{kind}_{stem}"


def _match(metrics: dict, stem: str) -> dict | None:
    prefix = "baseline_match_vs_" if stem == "baseline" else f"match_{stem}_vs_"
    found = [metrics[k] for k in sorted(metrics) if k.startswith(prefix)]
    return found[0] if found else None


def _bucket_start(label: str) -> int:
    head = label.split("-")[0]
    return int(head) if head.isdigit() else 0


def render_markdown(metrics: dict) -> str:
    """The card's "Measured" table, rating buckets and STS themes, from a checkpoint's metrics."""
    missing = "not measured"
    lines = ["| agent | puzzles | STS | action accuracy, test split | Kendall tau-b | match: W/D/L, Elo diff [95% CI] |",
             "|---|---|---|---|---|---|"]
    for label, stem in AGENTS:
        puzzles, sts = metrics.get(_name("puzzles", stem)), metrics.get(_name("sts", stem))
        static, match = metrics.get(_name("metrics", stem)), _match(metrics, stem)
        cells = [
            f"{100 * puzzles['accuracy']:.1f}% ({puzzles['solved']}/{puzzles['total']})" if puzzles else missing,
            f"{sts['score']} / {sts['maximum']}" if sts else missing,
            f"{100 * static['action_accuracy']:.1f}% (n={static['positions']})" if static else missing,
            f"{static['kendall_tau']:.3f}" if static else missing,
            (f"vs {match['b']}: +{match['wins']} ={match['draws']} -{match['losses']} ({match['games']} games), "
             f"{match['elo_diff']:+.0f} [{match['ci95'][0]:+.0f}, {match['ci95'][1]:+.0f}]") if match else missing,
        ]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += ["", "Puzzles per 400-point rating bucket:", ""]
    for label, stem in AGENTS:
        puzzles = metrics.get(_name("puzzles", stem))
        if puzzles:
            buckets = ", ".join(f"{k} {v['solved']}/{v['total']} ({100 * v['accuracy']:.0f}%)"
                                for k, v in sorted(puzzles["buckets"].items(), key=lambda kv: _bucket_start(kv[0])))
            lines.append(f"- {label}: {buckets}")
    lines += ["", "STS per theme (of 1,000 each):", ""]
    for label, stem in AGENTS:
        sts = metrics.get(_name("sts", stem))
        if sts:
            lines.append(f"- {label}: " + ", ".join(f"{t} {v['score']}" for t, v in sts["themes"].items()))
    return "\n".join(lines) + "\n"
