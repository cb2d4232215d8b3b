"""ChessBench (Ruoss et al.): config and presets, the transformer, decoding, losses, the
training loader, and ``family.FAMILY`` that registers it."""

from analysis.models.chessbench.config import (ACTION_VALUE, BEHAVIOURAL_CLONING, HEADS, PRESETS, STATE_VALUE,
                                               ChessBenchConfig)
from analysis.models.chessbench.model import FAMILY, ChessBenchTransformer, build, parameter_count

__all__ = ["ACTION_VALUE", "BEHAVIOURAL_CLONING", "FAMILY", "HEADS", "PRESETS", "STATE_VALUE", "ChessBenchConfig",
           "ChessBenchTransformer", "build", "parameter_count"]
