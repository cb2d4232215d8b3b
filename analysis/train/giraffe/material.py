"""The material-only evaluation of the bootstrap (section 4.4), on the site's win-probability curve."""

from __future__ import annotations

import chess

from analysis.evaluator import centipawns_to_score
from analysis.material import material_balance


def material_cp(board: chess.Board) -> int:
    """Material balance in centipawns for the side to move."""
    return 100 * material_balance(board)


def material_value(board: chess.Board) -> float:
    """The bootstrap target in [-1, 1]: 2 x expected score - 1, so the trained network's
    centipawns (``score_to_centipawns``) read back as the material count."""
    return 2.0 * centipawns_to_score(material_cp(board)) - 1.0
