"""Stockfish's labels for one position at a fixed node budget: best move, win probability, top k.

Reproducible by construction: one thread, and a ``ucinewgame`` (python-chess sends one when the
``game`` changes) before every position, which clears the hash and the move-ordering histories,
so a position's labels depend on the position, the budget and k alone, not on what the engine
searched before it nor on which worker labelled it.
"""

from __future__ import annotations

from dataclasses import dataclass

import chess
import chess.engine

from analysis.engines.scores import win_probability
from analysis.engines.stockfish import open_stockfish, require_stockfish, stockfish_version

__all__ = ["Labels", "Labeller", "require_stockfish", "stockfish_version"]


@dataclass(frozen=True)
class Labels:
    """Side to move's view. ``top_moves[0]`` is ``best_move``; ``top_win`` are its lines' win probabilities."""

    best_move: str
    win: float
    cp: int | None
    mate: int | None
    wdl: tuple[int, int, int] | None  # UCI_ShowWDL, permille
    top_moves: list[str]
    top_win: list[float]


class Labeller:
    """One Stockfish process (Threads=1) labelling positions at ``nodes`` with ``top_k`` lines."""

    def __init__(self, path: str, *, nodes: int, top_k: int, hash_mb: int):
        self.engine = open_stockfish(path, threads=1, hash_mb=hash_mb)
        self.limit = chess.engine.Limit(nodes=nodes)
        self.top_k = top_k

    def label(self, board: chess.Board) -> Labels:
        turn = board.turn
        lines = self.engine.analyse(board, self.limit, multipv=self.top_k, game=object())
        lines = [line for line in lines if line.get("pv")]
        first = lines[0]
        pov = first["score"].pov(turn)
        wdl = first.get("wdl")
        return Labels(
            best_move=first["pv"][0].uci(), win=win_probability(first["score"], turn), cp=pov.score(), mate=pov.mate(),
            wdl=tuple(wdl.pov(turn)) if wdl is not None else None,
            top_moves=[line["pv"][0].uci() for line in lines],
            top_win=[win_probability(line["score"], turn) for line in lines],
        )

    def close(self) -> None:
        self.engine.quit()
