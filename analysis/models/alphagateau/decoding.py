"""AlphaGateau outputs -> Evaluations: the edge policy over legal moves, the tanh value,
and the GATEAU attention as (layers, 1, 64, 64) maps in real squares."""

from __future__ import annotations

from typing import Sequence

import chess
import numpy as np

from analysis.encoding import Encoding
from analysis.encoding.graph import board_size
from analysis.encoding.graph_geometry import square_of_node
from analysis.evaluator import Evaluation, NonFiniteOutput, softmax_over_legal


def real_square_maps(maps: np.ndarray, board: chess.Board, encoding: Encoding) -> np.ndarray:
    """(..., N, N) node maps in the mover's frame -> (..., 64, 64) by real squares.

    A 5x5 board sits in the a1-e5 corner; squares off it stay 0 (no node).
    """
    size = board_size(board)
    if size == 8:
        return encoding.to_real_squares(maps, board)
    squares = square_of_node(size, board.turn)
    out = np.zeros(maps.shape[:-2] + (64, 64), maps.dtype)
    out[..., squares[:, None], squares[None, :]] = maps
    return out


def decode(out: dict[str, np.ndarray], boards: Sequence[chess.Board], encoding: Encoding, *,
           temperature: float = 1.0, attention: bool = False, name: str = "alphagateau") -> list[Evaluation]:
    evaluations = []
    for i, board in enumerate(boards):
        moves, edges = encoding.legal_moves(board)
        value = float(out["value"][i])
        bad = [k for k in ("value", "attention") if k in out and not np.isfinite(out[k][i]).all()]
        if len(edges) and not np.isfinite(out["policy"][i][edges]).all():
            bad.append("policy")
        if bad:
            raise NonFiniteOutput(f"{name} gave non-finite output ({', '.join(bad)}) for the position {board.fen()}")
        evaluations.append(Evaluation(
            score=(value + 1) / 2, policy=softmax_over_legal(out["policy"][i], moves, edges, temperature),
            extras={"q": value},
            attention=real_square_maps(out["attention"][i], board, encoding) if attention else None))
    return evaluations
