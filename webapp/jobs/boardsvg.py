"""A position of a job as an SVG picture: python-chess's board with the page's arrows.

The arrows are those the game page draws: the network's likeliest moves (green), the
search's best move (blue) and the reference engine's (violet), with the move that led here
highlighted. PNG is not offered:
no well-kept library on the site's machines renders SVG to PNG without a system library
(cairosvg needs libcairo), and every browser and editor opens SVG.
"""

from __future__ import annotations

import chess
import chess.svg

from dataclasses import dataclass

import numpy as np

from webapp.jobs.gameinput import board_for

MAX_ARROWS, ARROW_MIN = 5, 0.04  # as static/sightline/game/position.js
POLICY_COLOUR, BEST_COLOUR = "#15781b80", "#1d4ed8cc"
ENGINE_COLOUR = "#7c3aedcc"  # static/sightline/lib/format.js ENGINE_COLOUR at the page's 0.8 opacity


def arrows(results: dict) -> list[chess.svg.Arrow]:
    """Policy arrows (probability at least ``ARROW_MIN``, at most ``MAX_ARROWS``), then the search's best
    move, then the engine's (none where the game is over)."""
    policy = (results.get("eval") or {}).get("policy") or []
    out = [_arrow(uci, POLICY_COLOUR) for uci, p, *_ in policy[:MAX_ARROWS] if p >= ARROW_MIN]
    for best, colour in (((results.get("search") or {}).get("bestmove"), BEST_COLOUR),
                         ((results.get("engine") or {}).get("best"), ENGINE_COLOUR)):
        if best:
            out.append(_arrow(best, colour))
    return out


def _arrow(uci: str, colour: str) -> chess.svg.Arrow:
    move = chess.Move.from_uci(uci)
    return chess.svg.Arrow(move.from_square, move.to_square, color=colour)


# The explorer's colour stops (static/sightline/lib/colour.js: viridis-like), value in [0, 1].
STOPS = [(0.0, (68, 1, 84)), (0.25, (59, 82, 139)), (0.5, (33, 145, 140)), (0.75, (94, 201, 98)), (1.0, (253, 231, 37))]
HEAT_ALPHA = "d9"  # the explorer's 0.85 opacity


def colour(value: float) -> str:
    t = min(max(float(value), 0.0), 1.0)
    for (t0, c0), (t1, c1) in zip(STOPS, STOPS[1:]):
        if t <= t1:
            f = (t - t0) / (t1 - t0)
            return "#" + "".join(f"{round(a + f * (b - a)):02x}" for a, b in zip(c0, c1)) + HEAT_ALPHA
    return "#fde725" + HEAT_ALPHA


@dataclass(frozen=True)
class AttentionView:
    """What the explorer shows: one layer's head (or "mean"), a query square and a mode
    ("row": where the query attends; "col": which squares attend to it)."""

    layer: int
    head: int | str
    query: int
    mode: str = "row"

    def values(self, maps: np.ndarray) -> np.ndarray:
        """64 values from one layer's maps (heads, 64, 64), as the explorer computes them."""
        chosen = maps.mean(axis=0) if self.head == "mean" else maps[int(self.head)]
        return chosen[self.query, :] if self.mode == "row" else chosen[:, self.query]

    def fill(self, maps: np.ndarray) -> dict[int, str]:
        """Square colours spanning the map's own range (the explorer's default scale)."""
        values = self.values(maps)
        low, span = float(values.min()), float(values.max() - values.min())
        return {sq: colour((v - low) / span if span > 0 else 0.5) for sq, v in enumerate(values.tolist())}


def board_svg(nodes: list[dict], node_id: int, results: dict, *, flipped: bool = False, size: int = 480,
              attention: tuple[AttentionView, np.ndarray] | None = None) -> str:
    """``attention``: the view and its layer's maps; the board then shows that map under the pieces
    (the query square outlined, as on the page) instead of the policy arrows."""
    board = board_for(nodes, node_id)
    lastmove = board.move_stack[-1] if board.move_stack else None
    check = board.king(board.turn) if board.is_check() else None
    fill, marked, drawn = {}, None, arrows(results)
    if attention is not None:
        view, maps = attention
        fill, marked, drawn = view.fill(maps), [view.query], []
    return chess.svg.board(board, orientation=chess.BLACK if flipped else chess.WHITE, lastmove=lastmove,
                           check=check, arrows=drawn, fill=fill, squares=marked, size=size)
