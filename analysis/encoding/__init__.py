"""Board encodings, registered by name (``get_encoding``): lc0's 112 input planes and its
1858-move policy vocabulary, and ChessBench's 77 FEN tokens with its 1968 actions.

A new encoding is one module defining an ``Encoding`` plus one ``register_encoding`` line here.
"""

from analysis.encoding.chessbench import FEN_TOKENS
from analysis.encoding.giraffe import GIRAFFE_363
from analysis.encoding.graph import GRAPH_ENCODINGS
from analysis.encoding.lc0 import LC0_PLANES
from analysis.encoding.lc0_formats import BY_INPUT_FORMAT
from analysis.encoding.lc0_planes import (
    INPUT_FORMAT,
    PackedPosition,
    encode_planes,
    encode_tokens,
    pack,
    tokens_from_packed,
)
from analysis.encoding.policy_index import (
    POLICY_SIZE,
    index_to_move,
    legal_move_indices,
    move_to_index,
    vocabulary,
    vocabulary_uci,
)
from analysis.encoding.registry import ENCODINGS, Encoding, get_encoding, register_encoding

register_encoding(LC0_PLANES)
register_encoding(FEN_TOKENS)
register_encoding(GIRAFFE_363)
for _graph in GRAPH_ENCODINGS.values():
    register_encoding(_graph)
for _format in BY_INPUT_FORMAT.values():  # lc0's other input formats
    register_encoding(_format)

__all__ = [
    "ENCODINGS", "FEN_TOKENS", "INPUT_FORMAT", "LC0_PLANES", "POLICY_SIZE", "Encoding", "PackedPosition", "encode_planes",
    "encode_tokens", "get_encoding", "index_to_move", "legal_move_indices", "move_to_index", "pack",
    "register_encoding", "tokens_from_packed", "vocabulary", "vocabulary_uci",
]
