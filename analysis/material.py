"""Piece values: the one table every material count, capture ordering and exchange reads.

``PIECE_VALUES`` are pawns (the king counts nothing in material). ``CAPTURER_VALUES`` give the
king more than anything it can take, so ordering captures by victim then capturer tries king
captures last and counts them as winning only when the victim is undefended.
``EXCHANGE_CENTIPAWNS`` are the static-exchange values (N and B a quarter pawn over three, Q
three quarters over nine); each exchange sets the king's own value.
"""

from __future__ import annotations

import chess

PIECE_VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 0}
CAPTURER_VALUES = {**PIECE_VALUES, chess.KING: 100}
EXCHANGE_CENTIPAWNS = {chess.PAWN: 100, chess.KNIGHT: 325, chess.BISHOP: 325, chess.ROOK: 500, chess.QUEEN: 975}


def material_balance(board: chess.Board, color: chess.Color | None = None) -> int:
    """Material of ``color`` (default: the side to move) minus the other side's, in pawns."""
    color = board.turn if color is None else color
    return sum(v * (len(board.pieces(p, color)) - len(board.pieces(p, not color))) for p, v in PIECE_VALUES.items())
