"""A training run's learning curve: puzzles solved by the raw policy against positions seen.

Reads the snapshots a run wrote (``snapshot_every``: ``RUN/snapshots/step-NNNNNN.safetensors``, each
with ``positions_seen`` in its provenance), plays the puzzles with each one's policy agent, and
writes the points with their Wilson 95% intervals as JSON and as a picture, beside reference lines
(a starting network's figure, a target).

    python -m analysis.eval.learning_curve --run runs/cf-corpus \\
        --csv ../shared/data/puzzles/lichess_puzzles_1000.csv --start weights/cf-shaw.safetensors \\
        --target 0.30 --plot weights/candidates/cf-corpus.curve.png [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def snapshots(run: Path) -> list[Path]:
    found = sorted((run / "snapshots").glob("step-*.safetensors"))
    if not found:
        raise FileNotFoundError(f"{run}: no snapshots (set snapshot_every in the run's config)")
    return found


def policy_puzzles(model: Path, puzzles) -> dict:
    """The policy agent's puzzle figures for one checkpoint, as ``puzzles --json`` gives them."""
    from analysis.eval.puzzles import run_puzzles
    from analysis.eval.specs import resolve_agent

    agent = resolve_agent(str(model), algo="policy", nodes=None, device="cpu")
    try:
        return run_puzzles(puzzles, agent.choose).to_json()
    finally:
        agent.close()


def wilson(solved: int, total: int) -> list[float]:
    from scipy.stats import binomtest

    ci = binomtest(solved, total).proportion_ci(0.95, method="wilson")
    return [round(float(ci.low), 4), round(float(ci.high), 4)]


def curve(run: Path, puzzles, start: Path | None = None) -> dict:
    """The curve's points (positions seen, solved share, interval), the start network first if given."""
    from analysis.checkpoint import read_header

    def point(model: Path, **where) -> dict:
        found = policy_puzzles(model, puzzles)
        return {"model": str(model), **where, "solved": found["solved"], "total": found["total"],
                "accuracy": found["accuracy"], "ci95": wilson(found["solved"], found["total"])}

    points = [point(start, steps=0, positions_seen=0)] if start is not None else []
    for path in snapshots(run):
        provenance = read_header(path)[0].provenance
        points.append(point(path, steps=provenance["steps"], positions_seen=provenance["positions_seen"],
                            averaged=provenance.get("averaged", False)))
    return {"run": str(run), "points": points}


def plot(result: dict, path: Path, *, target: float | None = None, title: str | None = None) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = result["points"]
    x = [p["positions_seen"] for p in points]
    y = [100 * p["accuracy"] for p in points]
    err = [[100 * (p["accuracy"] - p["ci95"][0]) for p in points], [100 * (p["ci95"][1] - p["accuracy"]) for p in points]]
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label="raw policy, 1,000 puzzles (95% Wilson)")
    if target is not None:
        ax.axhline(100 * target, color="grey", linestyle="--", label=f"target {100 * target:.0f}%")
    ax.set(xlabel="training positions seen (from the start network)", ylabel="puzzles solved (%)",
           title=title or f"Learning curve: {result['run']}")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m analysis.eval.learning_curve", description=__doc__.split("\n")[0])
    parser.add_argument("--run", required=True, type=Path, help="a training run directory with snapshots/")
    parser.add_argument("--csv", required=True, type=Path, help="Lichess puzzle CSV")
    parser.add_argument("--start", type=Path, help="the network the run started from (its point at 0 positions)")
    parser.add_argument("--target", type=float, help="a target share, drawn as a line")
    parser.add_argument("--plot", type=Path, help="write the curve as a PNG here")
    parser.add_argument("--limit", type=int, help="only the first N puzzles")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    import torch

    from analysis.errors import CheckpointError
    from analysis.eval.puzzles import load_puzzles

    torch.set_num_threads(args.threads)
    try:
        result = curve(args.run, load_puzzles(args.csv, args.limit), args.start)
    except (OSError, ValueError, CheckpointError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.plot:
        plot(result, args.plot, target=args.target)
    if args.json:
        print(json.dumps(result))
    else:
        for p in result["points"]:
            print(f"{p['positions_seen']:>10,} positions: {p['solved']}/{p['total']} ({100 * p['accuracy']:.1f}%, "
                  f"95% {p['ci95']})  {p['model']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
