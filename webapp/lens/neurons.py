"""Neurons on a job's position (issue 28, item 7): what the site adds to the library's neuron
requests (``analysis.lens.requests``: ``neurons``, ``neuron``, ``carriers``, ``where_else``).

A where-else scan runs over a pool of positions: the head atlas's sample, this game's positions
(``game_fens``) or an uploaded FEN list (read by ``analysis.lens.checks.parse_fens``, the body at
most ``MAX_POOL_BYTES``). The pool's FENs are part of the request, so the same unit over the same
positions is one cache entry.
"""

from __future__ import annotations

import chess

from analysis.lens.checks import MAX_POOL

MAX_POOL_BYTES = 128 * 1024  # an uploaded list's body


def game_fens(nodes: list[dict]) -> list[str]:
    """This job's positions, each once, in node order (at most ``MAX_POOL``)."""
    seen: dict[str, None] = {}
    for node in nodes:
        seen.setdefault(chess.Board(node["fen"]).fen(), None)
    return list(seen)[:MAX_POOL]
