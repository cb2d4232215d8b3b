"""Board encodings by name: what a network sees, its move vocabulary and its position key.

A checkpoint records the encoding it was trained on; a family says which it
accepts. The position key comes from the board alone (no network), so the
site keys a job's positions when the job is created.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import chess
import numpy as np


@dataclass(frozen=True)
class Encoding:
    """One input encoding.

    ``encode``: boards -> the network's input batch. ``position_key``: equal keys
    mean equal inputs. ``vocabulary``: the policy index -> UCI table;
    ``legal_moves``: a board's legal moves and their vocabulary indices.
    ``square_tokens``: for each real square (a1 = 0 ... h8 = 63), the token that
    holds it, or None when token t is square t.
    ``board_size``: the only board the encoding reads (8x8 unless it says otherwise).
    ``encode_fens``: for encodings that are a function of the FEN alone, the same
    input straight from stored (python-chess normalised) FENs, so a training
    loader encodes its rows without building boards.
    """

    name: str
    encode: Callable[[Sequence[chess.Board]], np.ndarray]
    position_key: Callable[[chess.Board], bytes]
    vocabulary: Callable[[], list[str]]
    legal_moves: Callable[[chess.Board], tuple[list[chess.Move], np.ndarray]]
    square_tokens: Callable[[chess.Board], np.ndarray | None]
    encode_fens: Callable[[Sequence[str]], np.ndarray] | None = None
    board_size: int = 8  # the board it encodes: 8, or 5 for 5x5 Gardner chess

    def to_real_squares(self, maps: np.ndarray, board: chess.Board) -> np.ndarray:
        """(..., T, T) token-by-token maps -> (..., 64, 64) indexed by real squares."""
        order = self.square_tokens(board)
        return maps if order is None else maps[..., order, :][..., :, order]


ENCODINGS: dict[str, Encoding] = {}


def register_encoding(encoding: Encoding) -> Encoding:
    if encoding.name in ENCODINGS and ENCODINGS[encoding.name] is not encoding:
        raise ValueError(f"input encoding {encoding.name!r} is registered twice")
    ENCODINGS[encoding.name] = encoding
    return encoding


def get_encoding(name: str) -> Encoding:
    """The registered encoding ``name`` (every one is registered by ``analysis.encoding``)."""
    try:
        return ENCODINGS[name]
    except KeyError:
        raise ValueError(f"unknown input encoding {name!r}; known: {', '.join(sorted(ENCODINGS))}") from None
