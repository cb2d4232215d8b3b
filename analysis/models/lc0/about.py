"""What the site says of imported lc0 networks without loading them (no torch here)."""

from __future__ import annotations

from analysis.models.about import FamilyAbout

RESNET_ABOUT = FamilyAbout(
    no_attention_reason=("lc0's classical networks are convolutional residual networks: they have no attention, "
                         "so there are no maps to show."),
    lc0_search=True,
)
ATTENTION_ABOUT = FamilyAbout(
    no_lc0_reason=("Sightline writes only lc0's classical residual networks back in lc0's "
                   "format, so lc0's own search cannot be run on this attention network here."),
)
