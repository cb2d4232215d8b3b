"""lc0 policy indices -> ChessBench actions for whole datasets at once, read off the FEN tokens.

An annotated row stores its moves as lc0 indices (mover's frame, castling as
king-takes-rook, knight promotions sharing the plain move's index). Turning each into
a real move through a ``chess.Board`` costs a board per row; here the two facts the
conversion needs (side to move, the piece on the from-square) come from the 77 FEN
tokens, so millions of pairs convert in array operations. Only for moves that were
legal in their position (what ``annotate`` stores): a king moving two or more files is
then castling, and a pawn's plain move to the last rank a knight promotion.
"""

from __future__ import annotations

from functools import lru_cache

import chess
import numpy as np

from analysis.encoding.chessbench import BOARD_TOKENS, CHARACTERS
from analysis.encoding.chessbench_actions import actions
from analysis.encoding.policy_index import vocabulary

_BLACK_TO_MOVE = CHARACTERS.index("b")  # token 0 is the side to move
_PAWNS = [CHARACTERS.index("P"), CHARACTERS.index("p")]
_KINGS = [CHARACTERS.index("K"), CHARACTERS.index("k")]


@lru_cache(maxsize=1)
def _lc0_moves() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(from, to, promotion piece type or 0) of the 1858 lc0 entries, in the mover's frame."""
    entries = vocabulary()
    return (np.array([f for f, _, _ in entries], np.int64), np.array([t for _, t, _ in entries], np.int64),
            np.array([p or 0 for _, _, p in entries], np.int64))


@lru_cache(maxsize=1)
def _action_table() -> np.ndarray:
    """(64, 64, 7) -> ChessBench action of (from, to, promotion piece type or 0); -1 where none."""
    table = np.full((64, 64, 7), -1, np.int64)
    for action, uci in enumerate(actions()):
        move = chess.Move.from_uci(uci)
        table[move.from_square, move.to_square, move.promotion or 0] = action
    return table


def lc0_indices_to_actions(tokens: np.ndarray, rows: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """ChessBench actions of legal moves given as lc0 ``indices`` of positions ``tokens[rows]``.

    tokens: (positions, 77) FEN tokens; rows, indices: (N,) -> (N,) int64 actions.
    """
    lc0_from, lc0_to, promotion = (a[indices] for a in _lc0_moves())
    flip = np.where(tokens[rows, 0] == _BLACK_TO_MOVE, 56, 0)  # square_mirror is sq ^ 56
    from_square, to_square = lc0_from ^ flip, lc0_to ^ flip
    piece = tokens[rows, BOARD_TOKENS.start + (from_square ^ 56)]  # FEN order: rank 8 first
    to_rank = to_square // 8
    knight = np.isin(piece, _PAWNS) & (promotion == 0) & ((to_rank == 0) | (to_rank == 7))
    promotion = np.where(knight, chess.KNIGHT, promotion)
    castles = np.isin(piece, _KINGS) & (np.abs(to_square % 8 - from_square % 8) >= 2)
    castle_to = (from_square // 8) * 8 + np.where(to_square % 8 == 7, 6, 2)
    to_square = np.where(castles, castle_to, to_square)
    result = _action_table()[from_square, to_square, promotion]
    if (result < 0).any():
        bad = int(np.flatnonzero(result < 0)[0])
        raise ValueError(f"lc0 index {int(indices[bad])} of row {int(rows[bad])} is no ChessBench action "
                         "(was the move legal in its position?)")
    return result
