"""Chessformer outputs -> Evaluations: WDL softmax, the policy over legal moves, q and
short-term values as extras, attention maps in real squares."""

from __future__ import annotations

from typing import Sequence

import chess
import numpy as np

from analysis.encoding import Encoding
from analysis.evaluator import Evaluation, NonFiniteOutput, softmax_over_legal, wdl_to_score
from analysis.models.family import logits_softmax

# The outputs an Evaluation is made of; the policy counts at the legal moves only.
_CHECKED_OUTPUTS = ("wdl", "q", "q_err", "st", "st_err", "attention")


def decode(out: dict[str, np.ndarray], boards: Sequence[chess.Board], encoding: Encoding, *,
           temperature: float = 1.0, attention: bool = False, name: str = "chessformer") -> list[Evaluation]:
    wdl = logits_softmax(out["wdl"])
    evaluations = []
    for i, board in enumerate(boards):
        moves, indices = encoding.legal_moves(board)
        check_finite(name, board, out, i, indices)
        w, d, l = (float(p) for p in wdl[i])
        extras = {
            "q": float(out["q"][i]), "q_error": float(out["q_err"][i]),
            "short_term": float(out["st"][i]), "short_term_error": float(out["st_err"][i]),
        }
        maps = encoding.to_real_squares(out["attention"][i], board) if attention else None  # (L, H, 64, 64)
        evaluations.append(Evaluation(
            score=wdl_to_score((w, d, l)), wdl=(w, d, l),
            policy=softmax_over_legal(out["policy"][i], moves, indices, temperature),
            extras=extras, attention=maps,
        ))
    return evaluations


def check_finite(name: str, board: chess.Board, out: dict[str, np.ndarray], i: int, indices: np.ndarray) -> None:
    """Raise ``NonFiniteOutput`` naming the outputs and the position when any is NaN or infinite."""
    bad = [key for key in _CHECKED_OUTPUTS if key in out and not np.isfinite(out[key][i]).all()]
    if len(indices) and not np.isfinite(out["policy"][i][indices]).all():
        bad.append("policy")
    if bad:
        raise NonFiniteOutput(f"{name} gave non-finite output ({', '.join(bad)}) for the position {board.fen()}")
