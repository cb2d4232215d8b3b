"""AlphaGateau (Rigaux & Kashima, NeurIPS 2024): chess as a graph of squares and moves,
GATEAU layers, ResGATEAU blocks, node value head and edge policy head; ``family.FAMILY``
registers it."""

from analysis.models.alphagateau.config import PRESETS, AlphaGateauConfig
from analysis.models.alphagateau.model import FAMILY, AlphaGateau, build, parameter_count

__all__ = ["FAMILY", "PRESETS", "AlphaGateau", "AlphaGateauConfig", "build", "parameter_count"]
