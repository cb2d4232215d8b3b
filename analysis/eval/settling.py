"""Where a network settles on its move, over the puzzles: the logit lens's settling depth as a statistic.

For each puzzle's first solver position (after the setup move), the decision timeline
(``analysis.lens.timeline``, read from the evaluation's own pass) gives the readout point from which
the network's final move stays its top move. Reported as a fraction of the way through the network
(0 = the first readout point, 1 = the output alone), with a bootstrap 95% interval, for all puzzles
and split by whether the final move is the puzzle's: a network that "knows" early settles early.

    python -m analysis.eval.settling --model weights/cf-shaw.safetensors \\
        --csv ../shared/data/puzzles/lichess_puzzles_1000.csv [--limit N] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import chess
import numpy as np

BATCH = 64


def first_positions(puzzles) -> list[tuple[chess.Board, str]]:
    """(board after the setup move, the solver's first move) per puzzle."""
    out = []
    for puzzle in puzzles:
        board = chess.Board(puzzle.fen)
        board.push_uci(puzzle.moves[0])
        out.append((board, puzzle.moves[1]))
    return out


def settling_points(evaluator, boards: list[chess.Board]) -> tuple[list[dict], int]:
    """Each board's stored timeline (one evaluator pass a batch) and the number of readout points."""
    from analysis.lens.timeline import TimelineRecorder

    recorder = TimelineRecorder.for_model(evaluator.model, evaluator.encoding)
    if recorder.why is not None:
        raise ValueError(f"no decision timeline for this network: {recorder.why}")
    timelines = []
    for start in range(0, len(boards), BATCH):
        batch = boards[start:start + BATCH]
        with recorder.recording() as store:
            evaluator.evaluate(batch)
        timelines.extend(recorder.timelines(batch, store))
    return timelines, len(recorder.adapter.readouts)


def mean_interval(values: np.ndarray, seed: int = 0, draws: int = 2000) -> dict:
    """Mean with a seeded percentile-bootstrap 95% interval (scipy's bootstrap)."""
    from scipy.stats import bootstrap

    if len(values) < 2:
        return {"n": int(len(values)), "mean": float(values.mean()) if len(values) else None, "ci95": None}
    found = bootstrap((values,), np.mean, n_resamples=draws, method="percentile", random_state=seed)
    return {"n": int(len(values)), "mean": round(float(values.mean()), 4),
            "ci95": [round(float(found.confidence_interval.low), 4), round(float(found.confidence_interval.high), 4)]}


def settling_report(timelines: list[dict], solutions: list[str], points: int) -> dict:
    """The settling depth (fraction of the way through) for all positions, and for right and wrong moves."""
    depth, right = [], []
    for timeline, solution in zip(timelines, solutions):
        if timeline.get("final_from") is None:
            continue
        depth.append(timeline["final_from"] / max(points - 1, 1))
        right.append(timeline["final"] == solution)
    depth_a, right_a = np.asarray(depth), np.asarray(right, bool)
    return {"points": points, "all": mean_interval(depth_a), "final_is_solution": mean_interval(depth_a[right_a]),
            "final_is_not_solution": mean_interval(depth_a[~right_a]),
            "settled_at_output_only": round(float((depth_a == 1.0).mean()), 4) if len(depth_a) else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m analysis.eval.settling", description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="checkpoint path")
    parser.add_argument("--csv", required=True, type=Path, help="Lichess puzzle CSV")
    parser.add_argument("--limit", type=int, help="only the first N puzzles")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    import torch

    from analysis.checkpoint import load_evaluator
    from analysis.errors import CheckpointError
    from analysis.eval.puzzles import load_puzzles

    torch.set_num_threads(args.threads)
    try:
        positions = first_positions(load_puzzles(args.csv, args.limit))
        timelines, points = settling_points(load_evaluator(args.model, device="cpu"), [b for b, _ in positions])
    except (OSError, ValueError, CheckpointError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report = {"model": args.model, "puzzles": len(positions),
              **settling_report(timelines, [s for _, s in positions], points)}
    if args.json:
        print(json.dumps(report))
    else:
        a = report["all"]
        print(f"{args.model}: settles {a['mean']:.3f} of the way through {points} readout points "
              f"(95% {a['ci95']}), n = {a['n']}; right moves {report['final_is_solution']['mean']}, "
              f"wrong moves {report['final_is_not_solution']['mean']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
