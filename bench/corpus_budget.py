"""Choose the corpus's node budget and k: cost and quality of Stockfish's labels per (nodes, multipv).

For a sample of corpus positions, a deep search (``--deep`` nodes, one line) names the reference
best move; at each budget and each k, a ``multipv=k`` search (fresh hash, one thread, as the corpus
labels) is timed and scored on: its best move is the reference's (top-1 agreement), the reference
move is among its k lines (top-k coverage), and the soft policy target the training loop makes of
those lines (softmax of win probability / 0.02) gives the reference move this much mass.

    PYTHONPATH=. .venv/bin/python bench/corpus_budget.py /work/corpus/v1 --positions 120
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from pathlib import Path

import chess
import chess.engine

from analysis.corpus.label import Labeller, require_stockfish
from analysis.data.corpus_files import read_corpus
from analysis.data.sources import PositionSource

POLICY_TEMPERATURE = 0.02  # analysis.train.dataset.PositionDataset's default


def sample_boards(root: Path, count: int, seed: int) -> list[chess.Board]:
    rows = read_corpus(root, columns=["fen", "history_fen", "history_moves", "game_id", "ply", "source"]).to_pylist()
    return [PositionSource(**r).board() for r in random.Random(seed).sample(rows, min(count, len(rows)))]


def reference_moves(path: str, boards: list[chess.Board], nodes: int) -> list[str]:
    labeller = Labeller(path, nodes=nodes, top_k=1, hash_mb=64)
    try:
        return [labeller.label(b).best_move for b in boards]
    finally:
        labeller.close()


def score(path: str, boards, reference, nodes: int, k: int) -> dict:
    labeller = Labeller(path, nodes=nodes, top_k=k, hash_mb=4)
    top1 = covered = 0
    mass = 0.0
    started = time.perf_counter()
    try:
        labels = [labeller.label(b) for b in boards]
    finally:
        labeller.close()
    seconds = time.perf_counter() - started
    for lab, ref in zip(labels, reference):
        top1 += lab.best_move == ref
        covered += ref in lab.top_moves
        weights = [math.exp((w - max(lab.top_win)) / POLICY_TEMPERATURE) for w in lab.top_win]
        mass += sum(w for m, w in zip(lab.top_moves, weights) if m == ref) / sum(weights)
    n = len(boards)
    return {"nodes": nodes, "k": k, "ms_per_position": round(1000 * seconds / n, 2), "top1": round(top1 / n, 3),
            "top_k_coverage": round(covered / n, 3), "reference_mass": round(mass / n, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--positions", type=int, default=120)
    parser.add_argument("--deep", type=int, default=200_000)
    parser.add_argument("--nodes", type=int, nargs="+", default=[2000, 5000, 10000])
    parser.add_argument("--k", type=int, nargs="+", default=[1, 3, 5, 8])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    path = require_stockfish()
    boards = sample_boards(args.corpus, args.positions, args.seed)
    reference = reference_moves(path, boards, args.deep)
    for nodes in args.nodes:
        for k in args.k:
            print(json.dumps(score(path, boards, reference, nodes, k)), flush=True)


if __name__ == "__main__":
    main()
