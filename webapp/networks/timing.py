"""The forward pass timed when the site registers a network: the home form's cost estimate starts
from it before this site has analysed anything with the network (``analyses.estimates``)."""

from __future__ import annotations

import time

import chess

FORWARD_KEY = "site_forward_ms"  # in Network.metrics: {"ms_per_position", "positions"}
_OPENING = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6"]


def time_forward(evaluator, repeats: int = 3) -> dict:
    """The best of ``repeats`` batched evaluations of a short opening's positions, per position
    (the best, as other work on the machine only ever slows a run down)."""
    board, boards = chess.Board(), [chess.Board()]
    for uci in _OPENING:
        board.push_uci(uci)
        boards.append(board.copy())
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        evaluator.evaluate(boards)
        best = min(best, time.perf_counter() - start)
    return {"ms_per_position": round(1000 * best / len(boards), 4), "positions": len(boards)}
