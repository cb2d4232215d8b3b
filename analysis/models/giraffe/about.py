"""What the site says of Giraffe's networks without loading them (no torch here)."""

from __future__ import annotations

from analysis.displayed_value import QUIESCENCE
from analysis.models.about import FamilyAbout

ABOUT = FamilyAbout(
    default_search="probability",  # Lai's probability-limited search, which the networks were trained in
    no_attention_reason=("Giraffe's networks are plain multilayer perceptrons over hand-designed features: "
                         "they have no attention, so there are no maps to show."),
    # Lai's engine reads its evaluator only at quiescence leaves (and TD-Leaf trains it there): mid-exchange
    # static values were never its job, so the site shows the quiescence value.
    displayed_value=QUIESCENCE,
)
