"""Hand-made evaluators (the Evaluator protocol) whose value errors are known exactly."""

from __future__ import annotations

from typing import Callable, Hashable, Sequence

import chess

from analysis.data.sources import has_mate_in_one
from analysis.evaluator import Capabilities, Evaluation, MaterialEvaluator


class ScoreEvaluator:
    """Scores each board with ``score(board)`` (side to move's expected score); uniform policy."""

    name = "hand-made"
    capabilities = Capabilities(policy=False, value=True, wdl=False)
    value_only = None

    def __init__(self, score: Callable[[chess.Board], float]):
        self.score = score

    def evaluate(self, boards: Sequence[chess.Board], *, attention: bool = False,
                 temperature: float = 1.0) -> list[Evaluation]:
        out = []
        for board in boards:
            moves = list(board.legal_moves)
            out.append(Evaluation(score=float(self.score(board)),
                                  policy={m: 1.0 / len(moves) for m in moves} if moves else {}))
        return out

    def cache_key(self, board: chess.Board) -> Hashable:
        return (board.fen(), len(board.move_stack))


def material_score(board: chess.Board) -> float:
    return MaterialEvaluator().evaluate([board])[0].score


def sane_score(board: chess.Board) -> float:
    """Material, and a clear win when the mover can mate at once: passes the sanity suite."""
    return 0.95 if has_mate_in_one(board) else material_score(board)


def sane_evaluator(offset: Callable[[chess.Board], float] = lambda board: 0.0) -> ScoreEvaluator:
    """``sane_score`` plus ``offset(board)``, clipped to [0, 1]."""
    return ScoreEvaluator(lambda board: min(1.0, max(0.0, sane_score(board) + offset(board))))
