"""Head atlas time: a whole atlas (every head over the 256-position sample) on this machine.

    python bench/heads.py                          # cf-240m size (15 layers x 32 heads), untrained, CPU
    python bench/heads.py --preset cf-small        # any preset of the default family
    python bench/heads.py --model weights/cf-small.safetensors

Target (issue 12): under 10 minutes for a cf-240m-sized network on the 2-core CPU. Random
weights cost the same forward passes and scoring as trained ones, so an untrained network of
the right size measures the time; its labels mean nothing. The time is split into the
network's forward passes (with attention maps) and the scoring (masks, masses, sums).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import psutil
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.heads import AtlasConfig, compute_atlas  # noqa: E402
from analysis.heads.sample import SAMPLE_SIZE  # noqa: E402
from analysis.models.inference import make_evaluator  # noqa: E402
from analysis.models import DEFAULT_FAMILY, get_family  # noqa: E402


class TimedEvaluator:
    """Forwards ``evaluate`` and adds up the seconds spent in it."""

    def __init__(self, inner):
        self.inner, self.seconds = inner, 0.0
        self.name, self.capabilities = inner.name, inner.capabilities

    def evaluate(self, boards, **kwargs):
        start = time.perf_counter()
        try:
            return self.inner.evaluate(boards, **kwargs)
        finally:
            self.seconds += time.perf_counter() - start


def evaluator(args):
    if args.model:
        from analysis.checkpoint import load_evaluator

        return load_evaluator(args.model, device="cpu"), args.model
    family = get_family(args.family)
    torch.manual_seed(0)
    model = family.build(family.preset(args.preset))
    params = sum(p.numel() for p in model.parameters())
    return make_evaluator(model, device="cpu"), f"{args.family} {args.preset}, {params / 1e6:.0f}M parameters, untrained"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", default=DEFAULT_FAMILY)
    parser.add_argument("--preset", default="cf-240m")
    parser.add_argument("--model", help="a checkpoint instead of a random network")
    parser.add_argument("--positions", type=int, default=SAMPLE_SIZE)
    parser.add_argument("--batch", type=int, default=AtlasConfig.batch)
    args = parser.parse_args()
    inner, what = evaluator(args)
    timed = TimedEvaluator(inner)
    layers, heads = inner.capabilities.attention
    print(f"{what}: {layers} layers x {heads} heads, {args.positions} positions, batch {args.batch}, "
          f"torch threads {torch.get_num_threads()}, load average {psutil.getloadavg()[0]:.1f}", flush=True)
    start = time.perf_counter()
    last = [start]

    def progress(done, total):
        now = time.perf_counter()
        print(f"  {done:4d}/{total}  {now - start:7.1f} s  ({(now - last[0]) / args.batch:.2f} s/position)", flush=True)
        last[0] = now

    atlas = compute_atlas(timed, AtlasConfig(positions=args.positions, batch=args.batch), progress=progress)
    total = time.perf_counter() - start
    print(f"atlas: {total:.1f} s ({total / 60:.1f} min; target < 10 min for cf-240m over 256 positions): "
          f"forward passes {timed.seconds:.1f} s, scoring {total - timed.seconds:.1f} s; "
          f"peak RSS {psutil.Process().memory_info().rss / 2**30:.2f} GiB; load average {psutil.getloadavg()[0]:.1f}")
    print("labels:", {label: sum(c) for label, c in sorted(atlas.counts().items())})


if __name__ == "__main__":
    main()
