"""The 1858-move policy vocabulary of Lc0, in Lc0's order.

Moves are written in the mover's frame: for black to move the board is
mirrored vertically (rank r -> 7 - r), so every vocabulary entry reads as a
white move. The order is lc0's ``kMoveStrs`` (``tf/policy_index.py``): first
the 1792 queen-or-knight displacements sorted by from-square then to-square
(a1 = 0 ... h8 = 63), then the 66 rank-7 -> rank-8 pawn promotions to q, r, b
sorted by from-square, to-square, piece.

Two Lc0 conventions matter when mapping real moves:
- a knight promotion has no entry of its own: it shares the index of the
  plain pawn move (``a7a8n`` -> ``a7a8``), since lc0 packs knight as piece 0;
- castling is encoded as "king takes own rook" (``e1g1`` -> ``e1h1``,
  ``e1c1`` -> ``e1a1``), as lc0 does for Chess960 compatibility.
"""

from __future__ import annotations

from functools import lru_cache

import chess
import numpy as np

POLICY_SIZE = 1858
PROMOTION_PIECES = (chess.QUEEN, chess.ROOK, chess.BISHOP)  # order inside each promotion triple

_KNIGHT_STEPS = ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2))
_QUEEN_DIRECTIONS = ((0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1))


def _reachable(from_square: int) -> list[int]:
    """Squares a queen or a knight on an empty board reaches from ``from_square``."""
    file, rank = chess.square_file(from_square), chess.square_rank(from_square)
    targets: set[int] = set()
    for df, dr in _QUEEN_DIRECTIONS:
        f, r = file + df, rank + dr
        while 0 <= f < 8 and 0 <= r < 8:
            targets.add(chess.square(f, r))
            f, r = f + df, r + dr
    for df, dr in _KNIGHT_STEPS:
        f, r = file + df, rank + dr
        if 0 <= f < 8 and 0 <= r < 8:
            targets.add(chess.square(f, r))
    return sorted(targets)


@lru_cache(maxsize=1)
def vocabulary() -> tuple[tuple[int, int, int | None], ...]:
    """All 1858 entries as (from_square, to_square, promotion) in the mover's frame."""
    entries: list[tuple[int, int, int | None]] = []
    for from_square in chess.SQUARES:
        entries.extend((from_square, to, None) for to in _reachable(from_square))
    for from_file in range(8):
        for to_file in (from_file - 1, from_file, from_file + 1):
            if 0 <= to_file < 8:
                for piece in PROMOTION_PIECES:
                    entries.append((chess.square(from_file, 6), chess.square(to_file, 7), piece))
    assert len(entries) == POLICY_SIZE
    return tuple(entries)


@lru_cache(maxsize=1)
def _index_of() -> dict[tuple[int, int, int | None], int]:
    return {entry: i for i, entry in enumerate(vocabulary())}


def vocabulary_uci() -> list[str]:
    """The vocabulary as lc0 writes it (``a1b1`` ... ``h7h8b``), mover's frame."""
    return [chess.Move(f, t, p).uci() for f, t, p in vocabulary()]


def _castling_as_king_takes_rook(board: chess.Board, move: chess.Move) -> chess.Move:
    if not board.is_castling(move):
        return move
    rank = chess.square_rank(move.from_square)
    rook_file = 7 if chess.square_file(move.to_square) > chess.square_file(move.from_square) else 0
    if board.chess960:  # python-chess already writes Chess960 castling as king-takes-rook
        return move
    return chess.Move(move.from_square, chess.square(rook_file, rank))


def move_to_index(board: chess.Board, move: chess.Move) -> int:
    """Policy index of a legal ``move`` in ``board`` (either side to move)."""
    move = _castling_as_king_takes_rook(board, move)
    from_square, to_square = move.from_square, move.to_square
    if board.turn == chess.BLACK:
        from_square, to_square = chess.square_mirror(from_square), chess.square_mirror(to_square)
    promotion = move.promotion if move.promotion in PROMOTION_PIECES else None
    try:
        return _index_of()[(from_square, to_square, promotion)]
    except KeyError:
        raise ValueError(f"{move.uci()} has no policy index") from None


def index_to_move(board: chess.Board, index: int) -> chess.Move:
    """The real move of policy entry ``index`` for ``board``'s side to move.

    Undoes the mirror for black, turns king-takes-rook back into castling when
    the king stands on its start square with that castling right, and turns a
    plain move to the last rank into a knight promotion when a pawn makes it.
    The result is not checked for legality.
    """
    if not 0 <= index < POLICY_SIZE:
        raise ValueError(f"policy index {index} is outside 0..{POLICY_SIZE - 1}")
    from_square, to_square, promotion = vocabulary()[index]
    if board.turn == chess.BLACK:
        from_square, to_square = chess.square_mirror(from_square), chess.square_mirror(to_square)
    piece = board.piece_at(from_square)
    if piece is not None and piece.piece_type == chess.PAWN and promotion is None:
        if chess.square_rank(to_square) in (0, 7):
            promotion = chess.KNIGHT
    move = chess.Move(from_square, to_square, promotion)
    if (
        not board.chess960
        and piece is not None
        and piece.piece_type == chess.KING
        and board.piece_at(to_square) == chess.Piece(chess.ROOK, board.turn)
        and board.has_castling_rights(board.turn)
    ):
        castle = chess.Move(from_square, chess.square(6 if chess.square_file(to_square) == 7 else 2,
                                                      chess.square_rank(from_square)))
        if board.is_castling(castle):
            return castle
    return move


def legal_move_indices(board: chess.Board) -> tuple[list[chess.Move], np.ndarray]:
    """Legal moves of ``board`` and their policy indices, in one pass."""
    moves = list(board.legal_moves)
    return moves, np.fromiter((move_to_index(board, m) for m in moves), dtype=np.int64, count=len(moves))
