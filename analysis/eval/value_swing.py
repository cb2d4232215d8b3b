"""The side-to-move swing of a network's value along one decisive game, or many.

A value that favours whoever is to move lifts White's expected score on White's plies and drops it on
Black's, so the game page's line zig-zags. The swing is the mean of the network's expected score (in
White's view) over the positions with White to move, minus the mean over those with Black to move,
every position of the game from the start to the end included. On a decisive game both means follow
the same trend, so a value without the bias has a swing near 0 (issue 40: under 0.06).

    python -m analysis.eval.value_swing --model weights/cf-shaw.safetensors [--pgn GAME.pgn] \
        [--stockfish-nodes N] [--json]

The game's own course swings too (a sacrifice leaves one side a piece down on the other side's plies),
so the figure is read beside a reference's on the same game: ``--stockfish-nodes`` adds Stockfish's
swing (its win probability at that node budget; a finished game's result where the game has ended).

Without ``--pgn`` the game is Morphy's Opera game (Paris 1858), the site's own demonstration game.

One game is one sample, and its course weighs on the figure. ``--test-games`` takes every decisive
master game (``../shared/data/pgn``) that the corpus keeps for its test split (no training row of the
corpus comes from them; older datasets drew on the same files, so a network trained on those may have
seen them), and reports the mean swing over games with a bootstrap 95% interval; with
``--stockfish-nodes``, also Stockfish's on the same games and the paired difference (network minus
Stockfish, game by game), which takes the games' own course out:

    python -m analysis.eval.value_swing --model M --test-games --stockfish-nodes 20000 --json
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path
from typing import Sequence

import chess
import chess.engine
import chess.pgn

OPERA_GAME = """[Event "Opera game"]
[White "Paul Morphy"]
[Black "Duke Karl / Count Isouard"]
[Result "1-0"]

1. e4 e5 2. Nf3 d6 3. d4 Bg4 4. dxe5 Bxf3 5. Qxf3 dxe5 6. Bc4 Nf6 7. Qb3 Qe7 8. Nc3 c6
9. Bg5 b5 10. Nxb5 cxb5 11. Bxb5+ Nbd7 12. O-O-O Rd8 13. Rxd7 Rxd7 14. Rd1 Qe6 15. Bxd7+ Nxd7
16. Qb8+ Nxb8 17. Rd8# 1-0
"""


def game_boards(pgn_text: str) -> list[chess.Board]:
    """Every position of the first game in ``pgn_text``, the start and the end included, with its history."""
    game = chess.pgn.read_game(io.StringIO(pgn_text))
    if game is None or game.errors:
        raise ValueError(f"not a readable PGN game: {game.errors[0] if game else 'no game'}")
    return mainline_boards(game)


def mainline_boards(game: chess.pgn.Game) -> list[chess.Board]:
    """The positions of ``game``'s main line, each with its move history (for the lc0 planes)."""
    board = game.board()
    boards = [board.copy()]
    for move in game.mainline_moves():
        board.push(move)
        boards.append(board.copy(stack=True))
    if len(boards) < 3:
        raise ValueError("the swing needs a game of at least two moves")
    return boards


def held_out_decisive_games(pgn_files: Sequence[Path], *, test_share: float,
                            seed: int) -> list[tuple[str, list[chess.Board]]]:
    """(corpus game id, boards) of each decisive master game in the corpus's test split.

    The ids and the split are the corpus builder's (``analysis.corpus.masters``): no corpus training row
    comes from these games.
    """
    from analysis.corpus.masters import corpus_game_id
    from analysis.data.plan import game_split
    from analysis.data.sources import pgn_games

    games = []
    for game_id, game in pgn_games(list(pgn_files)):
        corpus_id = corpus_game_id(game_id)
        decisive = game.headers.get("Result") in ("1-0", "0-1")
        if decisive and game_split(corpus_id, test_share, seed) == "test":
            games.append((corpus_id, mainline_boards(game)))
    return games


def swing(white_scores: Sequence[float], white_to_move: Sequence[bool]) -> float:
    """Mean White-view score with White to move minus the mean with Black to move."""
    white = [s for s, w in zip(white_scores, white_to_move) if w]
    black = [s for s, w in zip(white_scores, white_to_move) if not w]
    if not white or not black:
        raise ValueError("the swing needs positions with each side to move")
    return sum(white) / len(white) - sum(black) / len(black)


def value_swing(evaluator, boards: list[chess.Board]) -> dict:
    """The network's swing on ``boards`` and the White-view scores it came from."""
    scores = [e.score if b.turn == chess.WHITE else 1.0 - e.score for e, b in zip(evaluator.evaluate(boards), boards)]
    turns = [b.turn == chess.WHITE for b in boards]
    return {"swing": round(swing(scores, turns), 4), "positions": len(boards),
            "white_scores": [round(s, 4) for s in scores]}


def stockfish_swing(boards: list[chess.Board], nodes: int, stockfish: str | None = None) -> dict:
    """Stockfish's swing on ``boards`` (one thread, ``nodes`` a position); the rules' result at the end."""
    from analysis.engines.scores import win_probability
    from analysis.engines.stockfish import open_stockfish, require_stockfish

    engine = open_stockfish(require_stockfish(stockfish), threads=1)
    try:
        scores = []
        for board in boards:
            outcome = board.outcome()
            if outcome is not None:
                scores.append(0.5 if outcome.winner is None else float(outcome.winner == chess.WHITE))
            else:
                scores.append(win_probability(engine.analyse(board, chess.engine.Limit(nodes=nodes))["score"],
                                              chess.WHITE))
    finally:
        engine.quit()
    return {"swing": round(swing(scores, [b.turn == chess.WHITE for b in boards]), 4), "nodes": nodes}


def games_swing(evaluator, games: list[tuple[str, list[chess.Board]]], *, stockfish_nodes: int | None = None,
                stockfish: str | None = None) -> dict:
    """The swing game by game, its mean over games with a bootstrap 95% interval and, with
    ``stockfish_nodes``, Stockfish's and the paired difference (network minus Stockfish)."""
    import numpy as np

    from analysis.eval.settling import mean_interval

    if not games:
        raise ValueError("no games to measure the swing on")
    network = np.array([value_swing(evaluator, boards)["swing"] for _, boards in games])
    per_game = [{"game": game_id, "network": float(s)} for (game_id, _), s in zip(games, network)]
    result = {"games": len(games), "positions": sum(len(boards) for _, boards in games),
              "network": mean_interval(network)}
    if stockfish_nodes:
        reference = np.array([stockfish_swing(boards, stockfish_nodes, stockfish)["swing"] for _, boards in games])
        for row, s in zip(per_game, reference):
            row["stockfish"] = float(s)
        result |= {"stockfish": {"nodes": stockfish_nodes, **mean_interval(reference)},
                   "difference": mean_interval(network - reference)}
    return result | {"per_game": per_game}


def _interval_text(found: dict) -> str:
    low, high = found["ci95"] or (float("nan"), float("nan"))
    return f"{found['mean']:+.3f} [{low:+.3f}, {high:+.3f}]"


def _measure(args) -> tuple[dict, str]:
    """The JSON result and its one-line summary, for one game or for the corpus's test games."""
    from analysis.checkpoint import load_evaluator

    evaluator = load_evaluator(args.model, device="cpu")
    if args.test_games:
        from analysis.corpus.config import CorpusConfig

        corpus = CorpusConfig()
        games = held_out_decisive_games(corpus.pgn_files, test_share=corpus.test_share, seed=corpus.seed)
        result = {"model": args.model, **games_swing(evaluator, games, stockfish_nodes=args.stockfish_nodes)}
        text = (f"{args.model}: side-to-move swing {_interval_text(result['network'])} over {result['games']} "
                f"decisive test games")
        if args.stockfish_nodes:
            text += (f"; Stockfish at {args.stockfish_nodes} nodes {_interval_text(result['stockfish'])}; "
                     f"difference {_interval_text(result['difference'])}")
        return result, text
    boards = game_boards(args.pgn.read_text() if args.pgn else OPERA_GAME)
    result = {"model": args.model, **value_swing(evaluator, boards)}
    text = f"{args.model}: side-to-move swing {result['swing']:+.3f} over {result['positions']} positions"
    if args.stockfish_nodes:
        result["stockfish"] = stockfish_swing(boards, args.stockfish_nodes)
        text += f"; Stockfish at {args.stockfish_nodes} nodes {result['stockfish']['swing']:+.3f}"
    return result, text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m analysis.eval.value_swing", description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="checkpoint path")
    games = parser.add_mutually_exclusive_group()
    games.add_argument("--pgn", type=Path, help="a PGN file whose first game is used (default: the Opera game)")
    games.add_argument("--test-games", action="store_true",
                       help="every decisive master game in the corpus's test split (seed 0), with an interval")
    parser.add_argument("--stockfish-nodes", type=int, help="also Stockfish's swing at this node budget")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    import torch

    from analysis.errors import CheckpointError

    torch.set_num_threads(args.threads)
    try:
        result, text = _measure(args)
    except (OSError, ValueError, CheckpointError, chess.engine.EngineError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result) if args.json else text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
