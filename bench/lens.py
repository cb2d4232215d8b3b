"""Lens speed and agreement on this machine, one run.

    python bench/lens.py                                   # cf-small and cb-cpu
    python bench/lens.py --atlas 256                       # also the causal atlas of cf-small
    python bench/lens.py --threads 1                       # steadier when other jobs share the CPU

Figures (issue 28 targets in brackets):
- logit lens + value at every readout point for one position (fastest of --repeat calls), as a
  ratio to one plain forward pass of the same net through the evaluator (encode, forward,
  decode) [<= 2x]; also the network part alone (captured forward + batched unembed vs the
  bare forward);
- the exact head grid of one move, every head ablated, one batched call [cf-small < 1 s];
- Spearman rank agreement between attribution patching and exact ablation over all heads,
  per position, over the first positions of the atlas sample (the network's top move);
- with --atlas N: the causal atlas over N sample positions [cf-small, 256: < 2 min].
"""

from __future__ import annotations

import argparse
import statistics
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
from analysis.lens.atlas import causal_atlas  # noqa: E402


def timed(fn, repeat: int) -> float:
    """Fastest of ``repeat`` calls after one warm-up: the machine is shared, and the minimum is
    the figure other agents' load disturbs least."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra, rb = a.argsort().argsort().astype(float), b.argsort().argsort().astype(float)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    return float((ra * rb).sum() / np.sqrt((ra * ra).sum() * (rb * rb).sum()))


def bench_network(path: Path, repeat: int, agreement_positions: int) -> None:
    evaluator = load_evaluator(path, device="cpu")
    adapter = lens_for(evaluator.model, evaluator.encoding)
    board = load_sample(1)[0]
    prepared = adapter.prepare(board)
    plain = timed(lambda: evaluator.evaluate([board]), repeat)
    lens = timed(lambda: core.logit_lens(adapter, board), repeat)
    with torch.inference_mode():
        bare = timed(lambda: adapter.run(prepared), repeat)
        captured = timed(lambda: adapter.unembed(prepared, torch.cat(adapter.run(prepared, capture=True)[0]), None),
                         repeat)
    print(f"{path.name}: {len(adapter.readouts)} readout points, {len(prepared.moves)} legal moves")
    print(f"  logit lens + value: {lens * 1e3:.1f} ms vs evaluate {plain * 1e3:.1f} ms: {lens / plain:.2f}x  "
          f"(network part {captured * 1e3:.1f} vs {bare * 1e3:.1f} ms: {captured / bare:.2f}x)")
    if not adapter.has("policy"):
        return
    top = core.logit_lens(adapter, board).top()[-1]
    units = adapter.units["head"]
    grid = timed(lambda: core.grid(adapter, board, top), repeat)
    print(f"  exact head grid ({units.layers} x {units.per_layer}) of {top}: {grid:.3f} s in one batched call")
    rhos = []
    for position in load_sample(agreement_positions):
        best = core.logit_lens(adapter, position).top()[-1]
        exact = core.grid(adapter, position, best)
        prepared = adapter.prepare(position)
        estimate = core.attribution(adapter, prepared, "head", core.move_index(prepared, best))
        rhos.append(spearman(estimate.ravel(), exact.logit.ravel()))
    print(f"  attribution vs exact, Spearman over all {units.layers * units.per_layer} heads: "
          f"median {statistics.median(rhos):.3f}, min {min(rhos):.3f}, max {max(rhos):.3f} over {len(rhos)} positions")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["weights/cf-small.safetensors", "weights/retired/cb-cpu.safetensors"])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--agreement", type=int, default=32, help="positions for the Spearman figure")
    parser.add_argument("--atlas", type=int, default=0, help="causal atlas of the first model over N sample positions")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads (default: torch's; 1 is steadier on a shared 2-core machine)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch threads {torch.get_num_threads()}")
    for model in args.models:
        bench_network(ROOT / model, args.repeat, args.agreement)
    if args.atlas:
        evaluator = load_evaluator(ROOT / args.models[0], device="cpu")
        adapter = lens_for(evaluator.model, evaluator.encoding)
        start = time.perf_counter()
        atlas = causal_atlas(adapter, load_sample(args.atlas))
        seconds = time.perf_counter() - start
        print(f"causal atlas of {args.models[0]} over {atlas.positions} positions: {seconds:.1f} s")
        order = np.argsort(-atlas.kl, axis=None)[:5]
        for i in order:
            layer, head = divmod(int(i), atlas.kl.shape[1])
            kl, score = atlas.kl[layer, head], atlas.score[layer, head]
            print(f"  L{layer} H{head}: mean KL {kl:.4f}, mean |d score| {score:.4f}")


if __name__ == "__main__":
    main()
