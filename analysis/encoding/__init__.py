"""Board encodings: lc0's 112 input planes and its 1858-move policy vocabulary."""

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

__all__ = [
    "INPUT_FORMAT", "POLICY_SIZE", "PackedPosition", "encode_planes", "encode_tokens", "index_to_move",
    "legal_move_indices", "move_to_index", "pack", "tokens_from_packed", "vocabulary", "vocabulary_uci",
]
