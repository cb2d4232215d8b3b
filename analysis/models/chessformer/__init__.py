"""Chessformer (Monroe & Chalmers): config and presets, encoder, heads, the network,
decoding, losses, and ``family.FAMILY`` that registers it."""

from analysis.models.chessformer.config import CONFIG_LIMITS, PRESETS, ChessformerConfig, preset
from analysis.models.chessformer.encoder import EncoderLayer, SelfAttention, displacement_index
from analysis.models.chessformer.heads import AttentionPolicyHead, ValueHead
from analysis.models.chessformer.model import FAMILY, Chessformer, build, parameter_count

__all__ = [
    "CONFIG_LIMITS", "FAMILY", "PRESETS", "AttentionPolicyHead", "Chessformer", "ChessformerConfig", "EncoderLayer",
    "SelfAttention", "ValueHead", "build", "displacement_index", "parameter_count", "preset",
]
