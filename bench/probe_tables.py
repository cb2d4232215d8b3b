"""The tables of docs/probes.md in one process (the positions labelled once for every run): the
probe with erasure of each ``--probe`` network and knowing vs doing over ``--knowing`` networks.
Writes ``OUT/<network>.json`` (the shape of ``probe --json``) and ``OUT/knowing-doing.json``.

    PYTHONPATH=. nice -n 5 .venv/bin/python bench/probe_tables.py --out /tmp/probe_tables --positions 2000
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

from analysis.cli.probe_cmd import _data, _knowing_doing, _load, _one, _concepts

SEVEN = "material,in_check,own_en_prise,opp_en_prise,mobility,mate_in_one,mate_threat"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--positions", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--probe", default="maia-1900,cf-shaw")
    parser.add_argument("--knowing", default="maia-1100,maia-1500,maia-1900")
    args = parser.parse_args()
    torch.set_num_threads(1)
    args.out.mkdir(parents=True, exist_ok=True)
    ns = argparse.Namespace(positions=args.positions, seed=args.seed, fens=None, data=None, penalty="l2",
                            erase=True, device="cpu")
    start = time.perf_counter()
    say = lambda text: print(f"{time.perf_counter() - start:7.1f}s {text}", file=sys.stderr, flush=True)
    data = _data(ns, _concepts(SEVEN))
    say("labelled")
    names = [n for n in args.knowing.split(",") if n]
    if names:
        out = _knowing_doing(names, [_load(n, "cpu") for n in names], data, ns, say)
        (args.out / "knowing-doing.json").write_text(json.dumps(out))
        say("knowing vs doing written")
    for name in (n for n in args.probe.split(",") if n):
        out = _one(name, *_load(name, "cpu"), data, ns, say)
        (args.out / f"{name}.json").write_text(json.dumps(out))
        say(f"{name} written")


if __name__ == "__main__":
    main()
