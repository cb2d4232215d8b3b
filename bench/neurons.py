"""Neuron quantities' speed on this machine, one run (issue 28, item 7).

    python bench/neurons.py                                # cf-small, torch's default threads
    python bench/neurons.py --model weights/maia-1100.safetensors --unit channel --threads 1

Figures (fastest of --repeat calls after a warm-up; the machine is shared):
- where-else over the head atlas's 256 sample positions, 64 a batch (as the worker scans), as a
  ratio to the evaluator's plain evaluation of the same positions in the same batches: what the
  scan costs beyond the forward passes the positions need anyway;
- a layer's most active units, one unit's map, and a move's carriers (one backward pass plus the
  top 8 removed exactly) on one position;
- with ``--agreement``: Spearman between every unit's attribution and its exact removal (the
  move's logit change) on that position, over all units of the kind (one batched exact pass).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.checkpoint import load_evaluator  # noqa: E402
from analysis.heads.sample import load_sample  # noqa: E402
from analysis.lens import lens_for  # noqa: E402
from analysis.lens import core  # noqa: E402
from analysis.lens.neurons import carriers, most_active, unit_map, where_else  # noqa: E402


def timed(fn, repeat: int) -> float:
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(ROOT / "weights" / "cf-small.safetensors"))
    parser.add_argument("--unit", default="mlp", help="the unit kind with activations (channel for lc0 SE-ResNets)")
    parser.add_argument("--layer", type=int, default=1)
    parser.add_argument("--index", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--agreement", action="store_true",
                        help="also remove every unit exactly and print the rank agreement with attribution")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    evaluator = load_evaluator(args.model, args.device)
    adapter = lens_for(evaluator.model, evaluator.encoding)
    boards = load_sample()
    board = boards[0]
    move = evaluator.evaluate([board])[0].best_move().uci()

    plain = timed(lambda: [evaluator.evaluate(boards[i:i + 64]) for i in range(0, len(boards), 64)], args.repeat)
    scan = timed(lambda: where_else(adapter, boards, args.layer, args.index, args.unit, batch=64), args.repeat)
    print(f"{Path(args.model).stem} on {args.device}, {torch.get_num_threads()} threads")
    print(f"where-else over {len(boards)} positions: {scan:.3f} s vs plain evaluation {plain:.3f} s: "
          f"{scan / plain:.2f}x")
    print(f"most active units: {timed(lambda: most_active(adapter, board, args.layer, args.unit), args.repeat):.4f} s")
    if adapter.activations([adapter.prepare(board)], args.unit, 0).shape[1] == 64:
        one_map = timed(lambda: unit_map(adapter, board, args.layer, args.index, args.unit), args.repeat)
        print(f"one unit's map: {one_map:.4f} s")
    if adapter.has("policy"):
        print(f"carriers of {move} (attribution + top 8 exact): "
              f"{timed(lambda: carriers(adapter, board, move, args.unit), args.repeat):.3f} s")
    if args.agreement and adapter.has("policy"):
        print(f"attribution vs exact removal, all units, {move}: Spearman {agreement(adapter, board, move, args.unit):.3f}")


def _ranks(x: np.ndarray) -> np.ndarray:
    return np.argsort(np.argsort(x, kind="stable"), kind="stable")


def agreement(adapter, board, move: str, kind: str) -> float:
    """Spearman between the one-backward-pass estimate and the exact change, over every unit."""
    prepared = adapter.prepare(board)
    column = [m.uci() for m in prepared.moves].index(move)
    estimate = core.attribution(adapter, prepared, kind, column).ravel()
    exact = core.grid(adapter, board, move, kind, top=None, max_variants=64).logit.ravel()
    return float(np.corrcoef(_ranks(estimate), _ranks(exact))[0, 1])


if __name__ == "__main__":
    main()
