"""Time a concept probe: the seven concepts of issue 39 on maia-1900 over 10,000 positions per concept
(target: under 10 minutes on the two shared cores), each stage timed: labelling the balanced sets,
reading and probing the trained net, the untrained copy and the input planes; ``--erase`` adds the
erasure at each concept's best point. Prints one JSON object (timings and the probe's result).

    PYTHONPATH=. nice -n 5 .venv/bin/python bench/probes.py --positions 10000 > /tmp/probes_bench.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import torch

from analysis.checkpoint import load_evaluator
from analysis.lens import lens_for
from analysis.probes.activations import untrained_copy
from analysis.probes.concepts import get_concept
from analysis.probes.erasure import EraseConfig
from analysis.probes.positions import PositionConfig, build, pool
from analysis.probes.run import RunConfig, erase_all, probe_network

SEVEN = "material,in_check,own_en_prise,opp_en_prise,mobility,mate_in_one,mate_threat"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="weights/maia-1900.safetensors")
    parser.add_argument("--concepts", default=SEVEN)
    parser.add_argument("--positions", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--erase", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    times: dict[str, float] = {}
    start = last = time.perf_counter()

    def lap(what: str) -> None:
        nonlocal last
        now = time.perf_counter()
        times[what] = round(times.get(what, 0.0) + now - last, 1)
        last = now
        print(f"{now - start:7.1f}s {what}", file=sys.stderr, flush=True)

    config = PositionConfig(positions=args.positions, seed=args.seed)
    fens = pool(config)
    lap("pool")
    data = build([get_concept(c) for c in args.concepts.split(",")], config, fens)
    lap("labels")
    evaluator = load_evaluator(args.model, device="cpu")
    adapter = lens_for(evaluator.model, evaluator.encoding)
    untrained = lens_for(untrained_copy(evaluator.model, args.seed), evaluator.encoding)
    run = RunConfig()
    stage = {"reading the untrained copy": "trained", "probed untrained": "untrained"}

    def progress(text: str) -> None:
        for prefix, name in stage.items():
            if text.startswith(prefix):
                lap(name)
                return
    result, _, acts = probe_network(adapter, untrained, data, run, args.seed, progress, keep=args.erase)
    lap("untrained and input")
    if args.erase:
        erase_all(adapter, data, result, acts, run, EraseConfig(seed=args.seed), args.seed)
        lap("erasure")
    total = round(time.perf_counter() - start, 1)
    print(json.dumps({"model": args.model, "positions": args.positions, "union": len(data.boards),
                      "sizes": {n: len(s.index) for n, s in data.sets.items()}, "seconds": times, "total": total,
                      "result": result}))


if __name__ == "__main__":
    main()
