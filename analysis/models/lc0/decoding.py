"""Lc0 network outputs -> Evaluations: the policy over legal moves (through the encoding's
canonical transform), WDL or the tanh value, moves left and q/d as extras, attention maps in
real squares."""

from __future__ import annotations

from typing import Sequence

import chess
import numpy as np

from analysis.encoding import Encoding
from analysis.evaluator import Evaluation, NonFiniteOutput, softmax_over_legal

# Outputs an Evaluation is made of; the policy counts at the legal moves only.
_CHECKED = ("wdl", "q", "d", "m", "attention")


def decode(out: dict[str, np.ndarray], boards: Sequence[chess.Board], encoding: Encoding, *,
           temperature: float = 1.0, attention: bool = False, name: str = "lc0") -> list[Evaluation]:
    """A network without a WDL head (no "wdl" output) has no WDL; moves left is reported where the head exists."""
    wdl, moves_left = "wdl" in out, "m" in out
    evaluations = []
    for i, board in enumerate(boards):
        moves, indices = encoding.legal_moves(board)
        _check_finite(name, board, out, i, indices)
        q = float(out["q"][i])
        extras = {"q": q, "d": float(out["d"][i])} if wdl else {"q": q}
        if moves_left:
            extras["moves_left"] = float(out["m"][i])
        evaluations.append(Evaluation(
            score=(q + 1) / 2, wdl=tuple(float(p) for p in out["wdl"][i]) if wdl else None,
            policy=softmax_over_legal(out["policy"][i], moves, indices, temperature), extras=extras,
            attention=encoding.to_real_squares(out["attention"][i], board) if attention else None))
    return evaluations


def _check_finite(name: str, board: chess.Board, out: dict[str, np.ndarray], i: int, indices: np.ndarray) -> None:
    bad = [key for key in _CHECKED if key in out and not np.isfinite(out[key][i]).all()]
    if len(indices) and not np.isfinite(out["policy"][i][indices]).all():
        bad.append("policy")
    if bad:
        raise NonFiniteOutput(f"{name} gave non-finite output ({', '.join(bad)}) for the position {board.fen()}")
