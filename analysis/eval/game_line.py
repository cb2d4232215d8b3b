"""How a network's line along one game looks: the per-ply zig-zag, and move marks two ways.

Issue 9 saw the game page's network line swing every ply and nearly every move marked "??".
These figures measure that on any game, from ``manage.py analyze_pgn --json`` output:

- zig-zag: the mean over inner plies of s_i - (s_{i-1} + s_{i+1}) / 2, signed +1 with White
  to move and -1 with Black (scores in White's view). An evaluator that adds b to the mover's
  score has zig-zag 2b on a steady game; a smooth line has about 0.
- mover error: mean of (score - reference) for the side to move, against e.g. Stockfish.
- parent-child marks: what the page used to show, the mover's score drop from the parent's
  evaluation to the child's, with lichess's thresholds (compare the stored same-parent marks).

    python -m analysis.eval.game_line LINES.jsonl [--stockfish-nodes N]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Sequence

# lichess's thresholds in expected score (the same as webapp.jobs.judgements).
THRESHOLDS = ((0.15, "??"), (0.10, "?"), (0.05, "?!"))


def _signs(white_to_move: Sequence[bool]) -> list[int]:
    return [1 if w else -1 for w in white_to_move]


def zigzag(scores: Sequence[float], white_to_move: Sequence[bool]) -> float:
    """Mean signed distance of each inner ply from its neighbours' mean (White's view scores)."""
    if len(scores) < 3:
        raise ValueError("the zig-zag needs at least 3 plies")
    sign = _signs(white_to_move)
    inner = [sign[i] * (scores[i] - (scores[i - 1] + scores[i + 1]) / 2) for i in range(1, len(scores) - 1)]
    return sum(inner) / len(inner)


def mover_error(scores: Sequence[float], reference: Sequence[float], white_to_move: Sequence[bool]) -> float:
    """Mean over-rating of the side to move against ``reference`` (both in White's view)."""
    sign = _signs(white_to_move)
    return sum(s * (a - b) for s, a, b in zip(sign, scores, reference)) / len(scores)


def mark(drop: float) -> str | None:
    return next((glyph for limit, glyph in THRESHOLDS if drop >= limit), None)


def parent_child_marks(scores: Sequence[float], white_to_move: Sequence[bool]) -> Counter:
    """Marks from the mover's drop between the parent's and the child's evaluations (the old way)."""
    sign = _signs(white_to_move)
    return Counter(mark(sign[i - 1] * (scores[i - 1] - scores[i])) for i in range(1, len(scores)))


def read_main_line(path: Path) -> list[dict]:
    """The main line's positions of an ``analyze_pgn --json`` output, in ply order.

    A final position where the game is over is left out: the page shows the rules' result
    there, not the network's raw value.
    """
    import chess

    lines = [json.loads(text) for text in path.read_text().splitlines() if text.strip()]
    main = sorted((line for line in lines if line["main"]), key=lambda line: line["ply"])
    if main and chess.Board(main[-1]["fen"]).is_game_over():
        main = main[:-1]
    if len(main) < 3:
        raise ValueError(f"{path}: fewer than 3 main-line positions")
    return main


def stockfish_line(fens: Sequence[str], nodes: int) -> list[float]:
    """Stockfish's win probability for White at each FEN (the library's formula; finished games by the rules)."""
    import chess
    import chess.engine

    from analysis.engines.stockfish import require_stockfish
    from analysis.evaluator import centipawns_to_score

    out = []
    with chess.engine.SimpleEngine.popen_uci(require_stockfish()) as engine:
        for fen in fens:
            board = chess.Board(fen)
            if board.is_game_over():
                result = board.result()
                out.append({"1-0": 1.0, "0-1": 0.0}.get(result, 0.5))
                continue
            cp = engine.analyse(board, chess.engine.Limit(nodes=nodes))["score"].white().score(mate_score=100_000)
            out.append(centipawns_to_score(cp))
    return out


def summary(main: list[dict], reference: list[float] | None = None) -> dict:
    scores = [line["network_score"] for line in main]
    white = [" w " in line["fen"] for line in main]
    out = {"moves": len(main) - 1, "start": scores[0], "zigzag": zigzag(scores, white),
           "same_parent_marks": dict(Counter((line.get("network_judgement", line["judgement"]) or {}).get("glyph")
                                             for line in main[1:])),
           "parent_child_marks": dict(parent_child_marks(scores, white))}
    engine = [line["judgement"] for line in main[1:] if (line["judgement"] or {}).get("source") == "engine"]
    if engine:  # analyze_pgn's engine lane: the engine's marks (lichess's) beside the network's
        out["engine_marks"] = dict(Counter(j.get("glyph") for j in engine))
    if reference is not None:
        out["stockfish_zigzag"] = zigzag(reference, white)
        out["mover_error_vs_stockfish"] = mover_error(scores, reference, white)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m analysis.eval.game_line", description=__doc__.split("\n")[0])
    parser.add_argument("lines", type=Path, help="analyze_pgn --json output")
    parser.add_argument("--stockfish-nodes", type=int, help="also compare with Stockfish at this many nodes")
    args = parser.parse_args(argv)
    try:
        main_line = read_main_line(args.lines)
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    reference = stockfish_line([m["fen"] for m in main_line], args.stockfish_nodes) if args.stockfish_nodes else None
    print(json.dumps(summary(main_line, reference), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
