"""The material-only evaluation of the bootstrap (section 4.4), on the site's win-probability curve."""

from __future__ import annotations

import chess

from analysis.evaluator import centipawns_to_score

PIECE_CP = {chess.PAWN: 100, chess.KNIGHT: 300, chess.BISHOP: 300, chess.ROOK: 500, chess.QUEEN: 900}


def material_cp(board: chess.Board) -> int:
    """Material balance in centipawns for the side to move."""
    us, them = board.turn, not board.turn
    return sum(v * (len(board.pieces(p, us)) - len(board.pieces(p, them))) for p, v in PIECE_CP.items())


def material_value(board: chess.Board) -> float:
    """The bootstrap target in [-1, 1]: 2 x expected score - 1, so the trained network's
    centipawns (``score_to_centipawns``) read back as the material count."""
    return 2.0 * centipawns_to_score(material_cp(board)) - 1.0
