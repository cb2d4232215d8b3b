"""Static exchange evaluation: the material a capture (or promotion) wins once every
recapture on its square has been played out, least valuable attacker first.

Used by the probability-limited search to tell winning and non-losing captures from losing
ones (Giraffe's fixed move allocations). Values are centipawns (P 100, N/B 325, R 500, Q 975).
"""

from __future__ import annotations

import chess

from analysis.material import EXCHANGE_CENTIPAWNS

VALUE = {**EXCHANGE_CENTIPAWNS, chess.KING: 20_000}


def _gain(board: chess.Board, move: chess.Move) -> int:
    """Material taken by ``move`` itself, a promotion's gain included."""
    if board.is_en_passant(move):
        victim = VALUE[chess.PAWN]
    else:
        victim = VALUE.get(board.piece_type_at(move.to_square), 0)
    if move.promotion:
        victim += VALUE[move.promotion] - VALUE[chess.PAWN]
    return victim


def _least_valuable_capture(board: chess.Board, square: int) -> chess.Move | None:
    best, best_value = None, None
    for move in board.generate_legal_captures(to_mask=chess.BB_SQUARES[square]):
        value = VALUE[board.piece_type_at(move.from_square)]
        if move.promotion not in (None, chess.QUEEN):
            continue
        if best_value is None or value < best_value:
            best, best_value = move, value
    return best


def _exchange(board: chess.Board, square: int) -> int:
    """What the side to move gains by recapturing on ``square`` (0 when it should not)."""
    move = _least_valuable_capture(board, square)
    if move is None:
        return 0
    gain = _gain(board, move)
    board.push(move)
    try:
        return max(0, gain - _exchange(board, square))
    finally:
        board.pop()


def see(board: chess.Board, move: chess.Move) -> int:
    """The exchange value of ``move`` for the side making it (negative: it loses material)."""
    gain = _gain(board, move)
    board.push(move)
    try:
        return gain - _exchange(board, move.to_square)
    finally:
        board.pop()
