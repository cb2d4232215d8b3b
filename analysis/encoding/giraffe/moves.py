"""Giraffe's move features (Lai 2015, section 6.1): what the move evaluator sees of one move.

The paper lists piece type, from square, to square, promotion type and the rank; the rank
(two numbers, see ``analysis.models.giraffe.move_model``) is computed inside the network by
the two-pass process, so the encoding carries only the first four, plus a flag that marks
real moves in the padded list. Coordinates are 0-1 from the mover's side, as in the reference
code, so a move and its mirror image read alike. The reference code's extra move features
(capture, check, SEE signs) are not in the paper's list and are left out.
"""

from __future__ import annotations

import chess
import numpy as np

# Legal positions have at most 218 moves; python-chess accepts odd FENs with more, and
# those are refused with a clear error rather than cut.
MAX_MOVES = 256
_PIECES = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING)
_PROMOTIONS = (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN)
MOVE_FEATURE_NAMES: tuple[str, ...] = (
    ("exists",) + tuple(f"piece.{chess.piece_symbol(p)}" for p in _PIECES)
    + ("from.x", "from.y", "to.x", "to.y") + tuple(f"promotion.{chess.piece_symbol(p)}" for p in _PROMOTIONS)
)
MOVE_FEATURES = len(MOVE_FEATURE_NAMES)  # 15


class TooManyMoves(ValueError):
    """A position with more legal moves than the move evaluator's input holds."""


def move_features(board: chess.Board, moves: list[chess.Move]) -> np.ndarray:
    """(MAX_MOVES, MOVE_FEATURES) float32 for ``moves`` of ``board``; rows past the moves are zero."""
    if len(moves) > MAX_MOVES:
        raise TooManyMoves(f"{len(moves)} legal moves in {board.fen()}; the Giraffe move features hold "
                           f"{MAX_MOVES}")
    out = np.zeros((MAX_MOVES, MOVE_FEATURES), np.float32)
    flip = 0 if board.turn == chess.WHITE else 7
    for i, move in enumerate(moves):
        row = out[i]
        row[0] = 1.0
        row[1 + _PIECES.index(board.piece_type_at(move.from_square))] = 1.0
        row[7] = chess.square_file(move.from_square) / 7
        row[8] = (chess.square_rank(move.from_square) ^ flip) / 7
        row[9] = chess.square_file(move.to_square) / 7
        row[10] = (chess.square_rank(move.to_square) ^ flip) / 7
        if move.promotion:
            row[11 + _PROMOTIONS.index(move.promotion)] = 1.0
    return out
