"""lc0's input formats as registered encodings, so the one evaluator and the site can use them.

Every encoding gives the registry's token layout (B, 64, 112): token t holds
square t of the network's frame (lc0's planes transposed). The classical
format is the shared ``lc0/INPUT_CLASSICAL_112_PLANE`` encoding already
registered; the others add lc0's canonical transform, so their legal-move
indices and square tokens go through it.
"""

from __future__ import annotations

from functools import partial
from typing import Sequence

import chess
import numpy as np

from analysis.encoding import LC0_PLANES, Encoding, register_encoding, vocabulary_uci
from analysis.models.lc0 import planes
from analysis.models.lc0.reader import INPUT_FORMATS

CLASSICAL = 1


def encode(boards: Sequence[chess.Board], input_format: int) -> np.ndarray:
    """(B, 64, 112) float32 tokens in the network's frame."""
    stacked, _ = planes.encode_boards(boards, input_format)
    return np.ascontiguousarray(stacked.transpose(0, 2, 1))


def _encoding(input_format: int) -> Encoding:
    return Encoding(
        name=planes.encoding_name(input_format),
        encode=partial(encode, input_format=input_format),
        position_key=partial(planes.position_key, input_format=input_format),
        vocabulary=vocabulary_uci,
        legal_moves=partial(planes.legal_moves, input_format=input_format),
        square_tokens=partial(planes.square_tokens, input_format=input_format),
    )


# lc0 input format number -> its encoding; the classical one is the shared encoding itself.
ENCODINGS: dict[int, Encoding] = {
    f: LC0_PLANES if f == CLASSICAL else register_encoding(_encoding(f)) for f in INPUT_FORMATS}
NAMES = tuple(e.name for e in ENCODINGS.values())


def encoding_for(config) -> str:
    """The one encoding a network of ``config`` takes (its lc0 input format)."""
    return ENCODINGS[config.input_format].name
