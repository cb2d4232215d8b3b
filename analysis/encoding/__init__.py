"""Board encodings, registered by name (``get_encoding``): lc0's 112 input planes and its
1858-move policy vocabulary today.

A new encoding is one module defining an ``Encoding`` plus one ``register_encoding`` line here.
"""

from analysis.encoding.graph import GRAPH_ENCODINGS
from analysis.encoding.lc0 import LC0_PLANES
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
[register_encoding(graph_encoding) for graph_encoding in GRAPH_ENCODINGS.values()]

__all__ = [
    "ENCODINGS", "INPUT_FORMAT", "LC0_PLANES", "POLICY_SIZE", "Encoding", "PackedPosition", "encode_planes",
    "encode_tokens", "get_encoding", "index_to_move", "legal_move_indices", "move_to_index", "pack",
    "register_encoding", "tokens_from_packed", "vocabulary", "vocabulary_uci",
]
