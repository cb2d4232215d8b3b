"""Stockfish's labels for one position at a fixed node budget: best move, win probability, top k.

Reproducible by construction: one thread, and a ``ucinewgame`` before every position, which clears
the hash and the move-ordering histories, so a position's labels depend on the position, the budget
and k alone, not on what the engine searched before it nor on which worker labelled it. The engine
is spoken to through ``analysis.corpus.uci`` (python-chess's commands, without its per-line parsing).
"""

from __future__ import annotations

from dataclasses import dataclass

import chess
import chess.engine

from analysis.corpus.uci import UciPipe
from analysis.engines.scores import win_probability
from analysis.engines.stockfish import require_stockfish, stockfish_version

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
        # The options python-chess's open_stockfish and analyse(multipv=k) set.
        self.engine = UciPipe(path, {"Threads": 1, "Hash": hash_mb, "UCI_ShowWDL": True, "Ponder": False,
                                     "UCI_AnalyseMode": True, "MultiPV": top_k})
        self.nodes = nodes
        self.top_k = top_k

    def label(self, board: chess.Board) -> Labels:
        turn = board.turn
        lines = self.engine.search(board, self.nodes)
        first = lines[0]  # scores are the side to move's already

        def win(score: chess.engine.Score) -> float:
            return win_probability(chess.engine.PovScore(score, turn), turn)

        return Labels(
            best_move=first.move, win=win(first.score), cp=first.score.score(), mate=first.score.mate(),
            wdl=first.wdl, top_moves=[line.move for line in lines], top_win=[win(line.score) for line in lines],
        )

    def close(self) -> None:
        self.engine.close()
