"""Patched passes per second on this machine (issue 38): one readout point x 64 single-square patches
in one batched forward (``analysis.lens.patching.patched_drop``), and every point x 64 squares in one
call (``patched_drops``), on the shipped maia-1900 and cf-shaw, for the tests' Black-to-move pair.

    python bench/lens_patching.py [--threads 1] [--repeat 5]

A rate counts patched variants (the clean variant of each batch not counted), including the corrupted
pass that gives the source; the fastest of --repeat calls after a warm-up (the machine is shared).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import chess
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.checkpoint import load_evaluator  # noqa: E402
from analysis.lens import lens_for  # noqa: E402
from analysis.lens.patching import patched_drop, patched_drops  # noqa: E402

CLEAN = "r3k2r/ppp2ppp/2n1bn2/3qp3/3P4/2N1BN2/PPP1QPPP/R3K2R b KQkq - 4 9"
CORRUPTED = "r3k2r/ppp2ppp/2n1bn2/3qp3/8/2N1BN2/PPP1QPPP/R3K2R b KQkq - 4 9"
MOVE = chess.Move.from_uci("d5d4")


def fastest(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--models", nargs="+", default=["maia-1900", "cf-shaw"])
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    squares = [[s] for s in range(64)]
    for name in args.models:
        evaluator = load_evaluator(ROOT / "weights" / f"{name}.safetensors", device="cpu")
        lens = lens_for(evaluator.model, evaluator.encoding)
        clean, corrupted = lens.prepare(chess.Board(CLEAN)), lens.prepare(chess.Board(CORRUPTED))
        point = lens.readouts[len(lens.readouts) // 2]
        one = fastest(lambda: patched_drop(lens, clean, corrupted, MOVE, point, squares), args.repeat)
        every = fastest(lambda: patched_drops(lens, clean, corrupted, MOVE, lens.readouts, squares), args.repeat)
        n = len(lens.readouts) * 64
        print(f"{name}: one point ({point}) x 64 squares {one * 1e3:.0f} ms = {64 / one:.0f} patched passes/s; "
              f"all {len(lens.readouts)} points x 64 = {n} in {every:.2f} s = {n / every:.0f} passes/s "
              f"(torch threads {torch.get_num_threads()})")


if __name__ == "__main__":
    main()
