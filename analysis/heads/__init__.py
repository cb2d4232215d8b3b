"""What each attention head does: pattern masks, scores against them, labels and the head atlas.

``compute_atlas(evaluator)`` scores every head of any evaluator with attention over the fixed
position sample (``sample.py``); ``show_me`` picks a query square that makes a pattern visible.
"""

from analysis.heads.atlas import AtlasConfig, HeadMeasurements, compute_atlas
from analysis.heads.patterns import LABELS, PATTERNS, UNLABELLED
from analysis.heads.scoring import LabelRule
from analysis.heads.showme import ShowMe, pattern_table, show_me

__all__ = ["AtlasConfig", "HeadMeasurements", "LABELS", "LabelRule", "PATTERNS", "ShowMe", "UNLABELLED",
           "compute_atlas", "pattern_table", "show_me"]
