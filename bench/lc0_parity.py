"""Sightline's MCTS against lc0's own search, same network and nodes: root visits and puzzles.

    python bench/lc0_parity.py visits --nodes 200 --every 50 --games 15
    python bench/lc0_parity.py puzzles --nodes 200 --every 5 --who lc0     # or sightline, sightline-lc0-preset
    python bench/lc0_parity.py puzzles --nodes 800 --every 1 --shard 3/10 --who lc0   # one tenth of them

``visits``: on positions from the Lichess puzzle file (the position the solver faces) and from the
master games in ``../shared/data/pgn``, the root visit distribution of each Sightline preset is
compared with lc0's (``VerboseMoveStats``, ``SmartPruningFactor=0`` so it spends the whole budget):
mean total variation distance and how often the most visited move is the same. ``puzzles``: the
ChessBench rule (``analysis.eval.puzzles``) for a Sightline preset or lc0 with its defaults
(the tree kept between a puzzle's moves by both). The network is maia-1900 unless told otherwise:
``--model`` (Sightline's checkpoint) and ``--lc0-net`` (the same net in lc0's format).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import chess
import chess.pgn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.eval.puzzles import load_puzzles, run_puzzles  # noqa: E402
from analysis.search import Budget, make_search, make_settings  # noqa: E402
from analysis.engines.lc0 import Lc0Engine, total_variation  # noqa: E402
from analysis.search.mcts import lc0_settings, sightline_settings  # noqa: E402
from analysis.search.mcts import MCTSSettings  # noqa: E402

DATA = ROOT.parent / "shared/data"
# solver name -> its MCTS settings: the earlier rules, today's default (lc0's rules, batches of 32), lc0's exactly
SOLVERS = {"sightline": sightline_settings, "sightline-default": MCTSSettings, "sightline-lc0-preset": lc0_settings}


def puzzle_positions(csv: Path, every: int) -> list[chess.Board]:
    boards = []
    for puzzle in load_puzzles(csv)[::every]:
        board = chess.Board(puzzle.fen)
        board.push_uci(puzzle.moves[0])
        boards.append(board)
    return boards


def game_positions(pgn_dir: Path, count: int, seed: int = 0) -> list[chess.Board]:
    """``count`` positions, each from a different master game, between moves 8 and 40, with history."""
    rng, boards = random.Random(seed), []
    for path in sorted(pgn_dir.glob("*.pgn")):
        with open(path, encoding="utf-8", errors="replace") as handle:
            for _ in range(count):
                game = chess.pgn.read_game(handle)
                if game is None:
                    break
                moves = list(game.mainline_moves())
                if len(moves) < 20:
                    continue
                board = game.board()
                for move in moves[:rng.randrange(16, min(80, len(moves)))]:
                    board.push(move)
                boards.append(board)
    rng.shuffle(boards)
    return boards[:count]


def sightline_visits(evaluator, solver: str, board: chess.Board, nodes: int) -> tuple[dict, chess.Move]:
    search = make_search("mcts", evaluator, SOLVERS[solver]())
    result = search.run(board.copy(), Budget(nodes=nodes))
    root = search.root
    total = float(root.N.sum())
    return {m: float(n) / total for m, n in zip(root.moves, root.N)}, result.best_move


def compare_visits(evaluator, lc0: Lc0Engine, boards: list[chess.Board], nodes: int) -> dict:
    rows = {solver: {"tv": [], "same_best": 0} for solver in SOLVERS}
    for board in boards:
        theirs = lc0.search(board, nodes)
        lc0_best = max(theirs.moves, key=lambda m: theirs.moves[m].visits)
        for solver, row in rows.items():
            ours, _ = sightline_visits(evaluator, solver, board, nodes)
            row["tv"].append(total_variation(ours, theirs.visit_distribution()))
            row["same_best"] += int(max(ours, key=ours.get) == lc0_best)
    return {solver: {"positions": len(boards), "mean_tv": round(sum(r["tv"]) / len(boards), 4),
                     "best_move_agreement": round(r["same_best"] / len(boards), 4)} for solver, r in rows.items()}


class Lc0Agent:
    """lc0 with its defaults as a puzzle solver; the tree is kept between one puzzle's moves."""

    def __init__(self, engine: Lc0Engine, nodes: int):
        self.engine, self.nodes, self._root = engine, nodes, None

    def choose(self, board: chess.Board) -> chess.Move:
        root = board.root()
        new_game, self._root = root != self._root, root
        return self.engine.search(board, self.nodes, new_game=new_game).best_move


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("visits", "puzzles"))
    parser.add_argument("--model", default=str(ROOT / "weights/maia-1900.safetensors"))
    parser.add_argument("--lc0-net", default=str(DATA / "lc0/maia-1900.pb.gz"))
    parser.add_argument("--csv", default=str(DATA / "puzzles/lichess_puzzles_1000.csv"))
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--every", type=int, default=5, help="every K-th puzzle")
    parser.add_argument("--shard", default="0/1", metavar="I/N",
                        help="puzzles: the I-th of N interleaved parts of those (runs that fit beside other work)")
    parser.add_argument("--games", type=int, default=15, help="visits: positions from master games")
    parser.add_argument("--who", choices=(*SOLVERS, "lc0"), default="lc0", help="puzzles: who solves")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="puzzles: an MCTS setting over the preset's, e.g. --set batch_size=32")
    args = parser.parse_args(argv)

    import torch

    from analysis.checkpoint import load_evaluator

    torch.set_num_threads(1)
    evaluator = load_evaluator(args.model, device="cpu")
    if args.what == "visits":
        boards = puzzle_positions(Path(args.csv), args.every) + game_positions(DATA / "pgn", args.games)
        with Lc0Engine(args.lc0_net, options={"SmartPruningFactor": 0}) as lc0:
            print(json.dumps({"nodes": args.nodes, **compare_visits(evaluator, lc0, boards, args.nodes)}))
        return 0
    index, parts = (int(n) for n in args.shard.split("/"))
    puzzles = load_puzzles(Path(args.csv))[::args.every][index::parts]
    if args.who == "lc0":
        with Lc0Engine(args.lc0_net) as lc0:
            report = run_puzzles(puzzles, Lc0Agent(lc0, args.nodes).choose)
    else:
        overrides = make_settings("mcts", dict(item.split("=", 1) for item in args.set)) if args.set else None
        changed = {k: getattr(overrides, k) for k in (item.split("=", 1)[0] for item in args.set)} if overrides else {}
        search = make_search("mcts", evaluator, SOLVERS[args.who](**changed))
        report = run_puzzles(puzzles, lambda b: search.run(b, Budget(nodes=args.nodes)).best_move)
    print(json.dumps({"who": args.who, "set": args.set, "nodes": args.nodes, "every": args.every,
                      "shard": args.shard, **report.to_json()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
