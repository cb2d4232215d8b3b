"""Giraffe outputs -> Evaluations: the tanh value as an expected score (and centipawns on the
site's win-probability curve), the move evaluator's P(best) normalised over the legal moves
as the policy (section 6: "normalize it to produce a probability distribution")."""

from __future__ import annotations

from typing import Sequence

import chess
import numpy as np

from analysis.encoding import Encoding
from analysis.evaluator import Evaluation, NonFiniteOutput, score_to_centipawns


def value_to_expected_score(value: float) -> float:
    """tanh output in [-1, 1] (side to move) -> expected score in [0, 1]."""
    return min(1.0, max(0.0, 0.5 * (value + 1.0)))


def move_probabilities(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """Each move's P(best) (sigmoid of its logit), sharpened by 1 / temperature, normalised to sum 1."""
    if temperature <= 0:
        raise ValueError("temperature must be positive")
    log_p = -np.logaddexp(0.0, -logits.astype(np.float64)) / temperature  # log sigmoid / T
    log_p -= log_p.max()
    p = np.exp(log_p)
    return p / p.sum()


def evaluation(board: chess.Board, moves: list[chess.Move], value: float, logits: np.ndarray, *,
               temperature: float = 1.0, name: str = "giraffe") -> Evaluation:
    """One position's Evaluation from its value and its legal moves' logits (in ``moves`` order)."""
    if not np.isfinite(value) or not np.isfinite(logits).all():
        raise NonFiniteOutput(f"{name} gave non-finite output for the position {board.fen()}")
    score = value_to_expected_score(value)
    policy = dict(zip(moves, move_probabilities(logits, temperature).tolist())) if moves else {}
    return Evaluation(score=score, policy=policy,
                      extras={"value": value, "centipawns": score_to_centipawns(score)})


def decode(out: dict[str, np.ndarray], boards: Sequence[chess.Board], encoding: Encoding, *,
           temperature: float = 1.0, attention: bool = False, name: str = "giraffe") -> list[Evaluation]:
    evaluations = []
    for i, board in enumerate(boards):
        moves, indices = encoding.legal_moves(board)
        logits = out["policy"][i][indices] if "policy" in out else np.zeros(0)
        evaluations.append(evaluation(board, moves, float(out["value"][i]), logits, temperature=temperature,
                                      name=name))
    return evaluations
