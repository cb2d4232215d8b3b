"""Search speed: MCTS against the raw batched evaluation rate, and alpha-beta / probability nodes/s.

    python bench/search.py                          # untrained cf-tiny (speed only), CPU, batch 32
    python bench/search.py --model weights/x.safetensors --device cuda --batch 256 --nodes 4096

Raw rate: positions/s of ``evaluator.evaluate`` on batches of ``--batch`` distinct
positions (with game history, as MCTS leaves have). MCTS rate: playouts/s of
``MCTS(batch_size=--batch)`` from a few positions. Target ratio MCTS / raw >= 0.7.
Alpha-beta and probability-limited search run on the material evaluator; ``--pls-model``
adds the probability-limited search with that checkpoint's evaluator (Giraffe's: the issue's
target is >= 20,000 nodes/s on one core, beside the material alpha-beta's rate).
Without ``--model`` a randomly initialised cf-tiny is used: its figures measure
speed only and say nothing about playing strength.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import chess

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.evaluator import MaterialEvaluator  # noqa: E402
from analysis.search import Budget, MCTSSettings, make_search  # noqa: E402

POSITIONS = [
    chess.STARTING_FEN,
    "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
    "r2q1rk1/pp2bppp/2n1pn2/3p4/3P4/2NBPN2/PP3PPP/R2Q1RK1 w - - 0 10",
    "8/5pk1/6p1/3R4/7P/6P1/r4PK1/8 b - - 0 40",
]


def game_positions(count: int, seed: int = 0) -> list[chess.Board]:
    """Distinct positions with history, from random games."""
    rng = random.Random(seed)
    boards, seen = [], set()
    board = chess.Board()
    while len(boards) < count:
        if board.is_game_over() or board.ply() > 80:
            board = chess.Board()
        board.push(rng.choice(list(board.legal_moves)))
        if board.fen() not in seen:
            seen.add(board.fen())
            boards.append(board.copy())
    return boards


def load(model: str | None, device: str | None):
    from analysis.checkpoint import load_evaluator

    if model:
        return load_evaluator(model, device=device), Path(model).name
    import torch

    from analysis.checkpoint import save_checkpoint
    from analysis.models import get_family

    torch.manual_seed(0)
    family = get_family("chessformer")  # the speed of the searches, on the family the site ships
    path = Path(tempfile.mkdtemp()) / "cf-tiny-untrained.safetensors"
    save_checkpoint(path, family.build(family.presets["cf-tiny"]), trained=False,
                    provenance={"source": "bench/search.py: random init, speed only"})
    return load_evaluator(path, device=device), "cf-tiny (untrained, speed only)"


def raw_rate(evaluator, batch: int, seconds: float) -> float:
    boards = game_positions(batch * 4)
    evaluator.evaluate(boards[:batch])  # warm-up
    done, start, i = 0, time.perf_counter(), 0
    while time.perf_counter() - start < seconds or done == 0:
        chunk = boards[(i % 4) * batch:(i % 4 + 1) * batch]
        evaluator.evaluate(chunk)
        done += len(chunk)
        i += 1
    return done / (time.perf_counter() - start)


def search_rate(name: str, evaluator, settings, nodes: int) -> tuple[float, int, dict]:
    # One short search first: one-time costs (a compiled kernel's load, first allocations) are not nodes/s.
    make_search(name, evaluator, settings).run(chess.Board(POSITIONS[1]), Budget(nodes=64))
    total_nodes, total_time, extras = 0, 0.0, {}
    for fen in POSITIONS:
        search = make_search(name, evaluator, settings)
        result = search.run(chess.Board(fen), Budget(nodes=nodes))
        total_nodes += result.nodes
        total_time += result.elapsed_s
        for key in ("evaluated", "batches", "cache_hits"):
            extras[key] = extras.get(key, 0) + result.extras.get(key, 0)
    return total_nodes / total_time, total_nodes, extras


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="checkpoint path (default: an untrained cf-tiny)")
    parser.add_argument("--device", default=None)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--nodes", type=int, default=256, help="MCTS playouts per position")
    parser.add_argument("--ab-nodes", type=int, default=20_000, help="alpha-beta nodes per position")
    parser.add_argument("--pls-model", help="a checkpoint to run the probability-limited search with")
    parser.add_argument("--pls-nodes", type=int, default=2_000, help="its nodes per position")
    parser.add_argument("--no-mcts", action="store_true", help="only the alpha-beta and probability rows")
    parser.add_argument("--seconds", type=float, default=5.0, help="time for the raw-rate measurement")
    args = parser.parse_args()

    material = MaterialEvaluator()
    ab_nps, ab_nodes, _ = search_rate("alphabeta", material, None, args.ab_nodes)
    pr_nps, pr_nodes, _ = search_rate("probability", material, None, args.ab_nodes)

    print(f"{'measurement':44} {'nodes':>9} {'nodes/s':>10}")
    if not args.no_mcts:
        evaluator, label = load(args.model, args.device)
        raw = raw_rate(evaluator, args.batch, args.seconds)
        mcts_nps, mcts_nodes, mx = search_rate("mcts", evaluator, MCTSSettings(batch_size=args.batch), args.nodes)
        print(f"model: {label}   device: {getattr(evaluator, 'device', 'cpu')}   batch: {args.batch}")
        print(f"{'raw batched evaluate() (positions/s)':44} {'':>9} {raw:10.1f}")
        print(f"{'mcts playouts':44} {mcts_nodes:9d} {mcts_nps:10.1f}")
        print(f"{'  ratio mcts / raw (target >= 0.7)':44} {'':>9} {mcts_nps / raw:10.2f}")
        print(f"{'  mcts: evaluated / batches / cache hits':44} "
              f"{mx['evaluated']}/{mx['batches']}/{mx['cache_hits']}")
    print(f"{'alphabeta, material evaluator':44} {ab_nodes:9d} {ab_nps:10.1f}")
    print(f"{'probability, material evaluator':44} {pr_nodes:9d} {pr_nps:10.1f}")
    if args.pls_model:
        from analysis.checkpoint import load_evaluator

        pls_nps, pls_nodes, _ = search_rate("probability", load_evaluator(args.pls_model, device=args.device),
                                            None, args.pls_nodes)
        print(f"{'probability, ' + Path(args.pls_model).name:44} {pls_nodes:9d} {pls_nps:10.1f}")
        print(f"{'  ratio to material alphabeta (target 1.25)':44} {'':>9} {pls_nps / ab_nps:10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
