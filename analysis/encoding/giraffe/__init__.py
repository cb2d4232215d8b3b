"""Giraffe's encoding (Lai 2015): the 363 board features plus the move features of every legal move.

One input row per board: the 363 board features, then ``MAX_MOVES`` x 15 move features of the
board's legal moves in python-chess's generation order (zero rows after the last). The policy
index of a move is its place in that order.
"""

from __future__ import annotations

from typing import Sequence

import chess
import numpy as np

from analysis.encoding.giraffe.features import BOARD_FEATURES, FEATURE_NAMES, board_features
from analysis.encoding.giraffe.moves import MAX_MOVES, MOVE_FEATURES, TooManyMoves, move_features
from analysis.encoding.registry import Encoding

NAME = "giraffe-363"
INPUT_SIZE = BOARD_FEATURES + MAX_MOVES * MOVE_FEATURES


def encode_one(board: chess.Board) -> np.ndarray:
    """(INPUT_SIZE,) float32: board features then the padded move features."""
    moves = list(board.legal_moves)
    return np.concatenate([board_features(board), move_features(board, moves).reshape(-1)])


def encode(boards: Sequence[chess.Board]) -> np.ndarray:
    out = np.zeros((len(boards), INPUT_SIZE), np.float32)
    for i, board in enumerate(boards):
        out[i] = encode_one(board)
    return out


def position_key(board: chess.Board) -> bytes:
    """Pieces, side to move, castling and en passant: all the features and the move list depend on."""
    return repr(board._transposition_key()).encode()


def legal_moves(board: chess.Board) -> tuple[list[chess.Move], np.ndarray]:
    moves = list(board.legal_moves)
    if len(moves) > MAX_MOVES:
        raise TooManyMoves(f"{len(moves)} legal moves in {board.fen()}; Giraffe holds {MAX_MOVES}")
    return moves, np.arange(len(moves))


GIRAFFE_363 = Encoding(
    name=NAME,
    encode=encode,
    position_key=position_key,
    # No fixed move vocabulary: policy index i is the board's i-th legal move.
    vocabulary=lambda: [f"legal-move-{i}" for i in range(MAX_MOVES)],
    legal_moves=legal_moves,
    square_tokens=lambda board: None,
)

__all__ = ["BOARD_FEATURES", "FEATURE_NAMES", "GIRAFFE_363", "INPUT_SIZE", "MAX_MOVES", "MOVE_FEATURES",
           "NAME", "TooManyMoves", "board_features", "encode", "move_features"]
