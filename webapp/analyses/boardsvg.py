"""A position of a job as an SVG picture: python-chess's board with the page's arrows.

The arrows are those the game page draws: the network's likeliest moves (green) and the
search's best move (blue), with the move that led here highlighted. PNG is not offered:
no well-kept library on the site's machines renders SVG to PNG without a system library
(cairosvg needs libcairo), and every browser and editor opens SVG.
"""

from __future__ import annotations

import chess
import chess.svg

from webapp.analyses.gameinput import board_for

MAX_ARROWS, ARROW_MIN = 5, 0.04  # as static/sightline/game.js
POLICY_COLOUR, BEST_COLOUR = "#15781b80", "#1d4ed8cc"


def arrows(results: dict) -> list[chess.svg.Arrow]:
    """Policy arrows (probability at least ``ARROW_MIN``, at most ``MAX_ARROWS``), then the best move."""
    policy = (results.get("eval") or {}).get("policy") or []
    out = [_arrow(uci, POLICY_COLOUR) for uci, p, *_ in policy[:MAX_ARROWS] if p >= ARROW_MIN]
    best = (results.get("search") or {}).get("bestmove")
    if best:
        out.append(_arrow(best, BEST_COLOUR))
    return out


def _arrow(uci: str, colour: str) -> chess.svg.Arrow:
    move = chess.Move.from_uci(uci)
    return chess.svg.Arrow(move.from_square, move.to_square, color=colour)


def board_svg(nodes: list[dict], node_id: int, results: dict, *, flipped: bool = False, size: int = 480) -> str:
    board = board_for(nodes, node_id)
    lastmove = board.move_stack[-1] if board.move_stack else None
    check = board.king(board.turn) if board.is_check() else None
    return chess.svg.board(board, orientation=chess.BLACK if flipped else chess.WHITE, lastmove=lastmove,
                           check=check, arrows=arrows(results), size=size)
