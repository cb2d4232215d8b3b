"""An engine's score as the win probability the datasets store (ChessBench's curve)."""

from __future__ import annotations

import chess
import chess.engine

from analysis.evaluator import centipawns_to_score


def win_probability(score: chess.engine.PovScore, color: chess.Color) -> float:
    """ChessBench win%: 1/(1+exp(-0.00368208 cp)); mate for us -> 1, mate against us -> 0."""
    pov = score.pov(color)
    mate = pov.mate()
    if mate is not None:
        return 1.0 if mate > 0 else 0.0
    return centipawns_to_score(pov.score())
