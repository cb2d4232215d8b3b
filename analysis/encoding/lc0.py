"""lc0's 112 input planes as a registered encoding (64 square tokens in the mover's frame)."""

from __future__ import annotations

import chess
import numpy as np

from analysis.encoding.lc0_planes import INPUT_FORMAT, encode_tokens, pack
from analysis.encoding.policy_index import legal_move_indices, vocabulary_uci
from analysis.encoding.registry import Encoding

# Square t of the mover's frame is real square t ^ 56 when black is to move (a mirror: its own inverse).
_MIRROR = np.arange(64) ^ 56


def _square_tokens(board: chess.Board) -> np.ndarray | None:
    return _MIRROR if board.turn == chess.BLACK else None


LC0_PLANES = Encoding(
    name=INPUT_FORMAT,
    encode=encode_tokens,
    position_key=lambda board: pack(board).key(),
    vocabulary=vocabulary_uci,
    legal_moves=legal_move_indices,
    square_tokens=_square_tokens,
)
