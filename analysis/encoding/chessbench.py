"""ChessBench's FEN tokens as a registered encoding (Ruoss et al.; reference ``src/tokenizer.py``).

77 tokens from python-chess's FEN (en passant only when a capture is legal):
side to move (1), the 64 squares in FEN order, rank 8 first, a digit n becoming
n '.' tokens (64), castling right-padded with '.' (4), en passant or '..' (2),
half-move clock and full-move number, each right-padded with '.' (3 + 3). The
board is never flipped. A token's id is its place in ``CHARACTERS`` (31 symbols;
'b' serves the black bishop, file b and black to move alike).

The paper says "the ASCII code of each character is one token"; the released code
(and so its checkpoints) uses the 31-symbol index, and so do we, to keep the
reference's start-position vector (tests/test_chessbench_encoding.py).
"""

from __future__ import annotations

from typing import Sequence

import chess
import numpy as np

from analysis.encoding.chessbench_actions import legal_actions, vocabulary_uci
from analysis.encoding.registry import Encoding

NAME = "chessbench/fen77"
CHARACTERS = "0123456789abcdefghpnrkqPBNRQKw."
SEQUENCE_LENGTH = 77
BOARD_TOKENS = slice(1, 65)  # the 64 squares within the 77 tokens

_LOOKUP = np.full(256, 255, np.uint8)
_LOOKUP[np.frombuffer(CHARACTERS.encode("ascii"), np.uint8)] = np.arange(len(CHARACTERS), dtype=np.uint8)
_RUNS = str.maketrans({str(n): "." * n for n in range(1, 9)})


def fen_string(fen: str) -> str:
    """The 77-character padded form of a normalised FEN (ValueError when a field does not fit)."""
    try:
        placement, side, castling, en_passant, halfmoves, fullmoves = fen.split(" ")
    except ValueError:
        raise ValueError(f"not a six-field FEN: {fen!r}") from None
    text = (side + placement.replace("/", "").translate(_RUNS) + castling.replace("-", "").ljust(4, ".")
            + en_passant.replace("-", "").ljust(2, ".") + halfmoves.ljust(3, ".") + fullmoves.ljust(3, "."))
    if len(text) != SEQUENCE_LENGTH:
        raise ValueError(f"the FEN {fen!r} does not make {SEQUENCE_LENGTH} ChessBench tokens "
                         "(counters above 999, or Chess960 castling)")
    return text


def encode_fens(fens: Sequence[str]) -> np.ndarray:
    """(B, 77) int64 token ids of normalised FENs (as stored: python-chess ``board.fen()``)."""
    if not fens:
        return np.zeros((0, SEQUENCE_LENGTH), np.int64)
    raw = np.frombuffer("".join(fen_string(f) for f in fens).encode("ascii"), np.uint8)
    tokens = _LOOKUP[raw].reshape(len(fens), SEQUENCE_LENGTH)
    if (tokens == 255).any():
        bad = fens[int(np.flatnonzero((tokens == 255).any(1))[0])]
        raise ValueError(f"the FEN {bad!r} has characters outside ChessBench's vocabulary")
    return tokens.astype(np.int64)


def encode(boards: Sequence[chess.Board]) -> np.ndarray:
    return encode_fens([board.fen() for board in boards])


# Real square s (a1 = 0) sits at FEN position s ^ 56 (rank 8 first), after the side-to-move token.
_SQUARE_TOKENS = 1 + (np.arange(64) ^ 56)


FEN_TOKENS = Encoding(
    name=NAME,
    encode=encode,
    position_key=lambda board: board.fen().encode("ascii"),  # the tokens are a function of the FEN
    vocabulary=vocabulary_uci,
    legal_moves=legal_actions,
    square_tokens=lambda board: _SQUARE_TOKENS,
    encode_fens=encode_fens,
)
