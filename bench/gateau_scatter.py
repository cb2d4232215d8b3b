"""Where an AlphaGateau forward pass spends its time: the share in sparse index ops.

    python bench/gateau_scatter.py                      # ag-5 on the CPU, batch 256
    python bench/gateau_scatter.py --preset ag-small --batch 64 --device cuda

A graph network moves features between its 64 nodes and 1,858 edges with
gathers (h[:, senders]) and scatters (index_add, scatter_reduce); those ops
do no dense arithmetic, so their share of the time bounds the model FLOP
utilisation. Target: under half. Speed and MFU: bench/inference.py --family
alphagateau --preset ag-5.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from inference import random_boards  # noqa: E402

from analysis.encoding import get_encoding  # noqa: E402
from analysis.models import get_family  # noqa: E402

# Ops that move features along edges rather than compute on them.
SPARSE_OPS = ("aten::index", "aten::index_select", "aten::index_add", "aten::index_add_", "aten::scatter_reduce",
              "aten::scatter_add", "aten::gather", "aten::scatter", "aten::index_put_")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="ag-5")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    family = get_family("alphagateau")
    config = family.preset(args.preset)
    torch.manual_seed(0)
    model = family.build(config).to(args.device).eval()
    encoding = get_encoding(family.encoding_of(config))
    inputs = torch.from_numpy(encoding.encode(random_boards(args.batch))).to(args.device)
    with torch.inference_mode():
        model(inputs)  # warm-up
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if args.device.startswith("cuda") else [])
        with profile(activities=activities) as prof:
            for _ in range(args.runs):
                model(inputs)
    attribute = "self_device_time_total" if args.device.startswith("cuda") else "self_cpu_time_total"
    events = prof.key_averages()
    total = sum(getattr(e, attribute) for e in events)
    sparse = {e.key: getattr(e, attribute) for e in events if e.key in SPARSE_OPS}
    print(f"{args.preset} batch {args.batch} on {args.device}, {args.runs} forward passes, "
          f"{torch.get_num_threads()} threads")
    for name, micros in sorted(sparse.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<24} {micros / total:6.1%}")
    top = sorted(events, key=lambda e: -getattr(e, attribute))[:6]
    print("largest ops: " + ", ".join(f"{e.key} {getattr(e, attribute) / total:.0%}" for e in top))
    print(f"sparse index ops: {sum(sparse.values()) / total:.1%} of the time (target: under 50%)")


if __name__ == "__main__":
    main()
