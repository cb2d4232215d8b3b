"""Measured metrics in a checkpoint's metadata: attach them, and render them for a model card."""

from __future__ import annotations

from pathlib import Path

from analysis.checkpoint import load_checkpoint, read_header, rewrite_metadata

# Card rows: (label, metric-name stem). Names follow `attach-metrics --result NAME=...`:
# puzzles_policy, sts_value, metrics_policy, match_policy_vs_sf1350, baseline_puzzles, ...
AGENTS = [("policy agent (argmax policy)", "policy"), ("value agent (depth 1)", "value"),
          ("material-greedy 1-ply baseline", "baseline"), ("probability-limited search", "probability")]
# Rows shown only when measured: the search a family plays with by default (Giraffe's), where the
# policy and value agents above are not its way of playing.
OPTIONAL = {"probability"}


def attach_metrics(path: Path, metrics: dict) -> dict:
    """Merge ``metrics`` into the checkpoint's metadata (weights untouched, float16 ones stay float16);
    returns the merged dict. A file that already holds them is left as it is (a rerun of
    ``ablation run`` must not rewrite every shipped variant's bytes)."""
    header = read_header(path)[0]  # a checkpoint file, not a network another program wrote
    merged = {**header.metrics, **metrics}
    if merged == header.metrics:
        return merged
    _, meta = load_checkpoint(path)  # the whole file is checked before it is rewritten
    meta.metrics = merged
    rewrite_metadata(path, meta)
    return meta.metrics


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
        if stem in OPTIONAL and not any((puzzles, sts, static, match)):
            continue
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
    lines += [""] + render_value_quality(metrics) + render_value_sanity(metrics)
    return "\n".join(lines).rstrip("\n") + "\n"


# Value figures: `value-quality --json` attached as value_quality (baseline_value_quality for
# `--model material`), `value-sanity --json` as value_sanity.
VALUE_QUALITY = [("network", "value_quality"), ("material baseline", "baseline_value_quality")]


def _signed(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.3f}"


def render_value_quality(metrics: dict) -> list[str]:
    """The value-quality table: overall and per source, for the network and the baseline."""
    found = [(label, metrics[key]) for label, key in VALUE_QUALITY if key in metrics]
    if not found:
        return ["Value quality: not measured", ""]
    lines = ["Value quality: expected score vs Stockfish's win probability (side to move); signed errors in "
             "White's view; side-to-move bias = (White-to-move - Black-to-move error) / 2:", "",
             "| evaluator | positions | n | MAE | Brier | ECE | signed error, White to move | "
             "signed error, Black to move | side-to-move bias |", "|---|---|---|---|---|---|---|---|---|"]
    for label, vq in found:
        for group, f in {"all": vq["overall"], **vq["by_source"]}.items():
            signed = f["signed_error_white_view"]
            lines.append(f"| {label} | {group} | {f['positions']} | {f['mae']:.3f} | {f['brier']:.4f} | "
                         f"{f['ece']:.3f} | {_signed(signed['white_to_move'])} | {_signed(signed['black_to_move'])} "
                         f"| {_signed(f['side_to_move_bias'])} |")
    return lines + ["", f"({found[0][1]['split']} split of {found[0][1]['data']})", ""]


def render_value_sanity(metrics: dict) -> list[str]:
    """The sanity suite's verdict, with every failed check and its figures."""
    sanity = metrics.get("value_sanity")
    if not sanity:
        return ["Value sanity suite: not run", ""]
    checks = sanity["checks"]
    failed = [c for c in checks if not c["passed"]]
    verdict = "passed" if sanity["passed"] else "FAILED"
    lines = [f"Value sanity suite (version {sanity['suite_version']}): {verdict}, "
             f"{len(checks) - len(failed)}/{len(checks)} checks passed" + (":" if failed else "."), ""]
    lines += [f"- failed: {c['name']}: {c['detail']}" for c in failed]
    return lines + ([""] if failed else [])
