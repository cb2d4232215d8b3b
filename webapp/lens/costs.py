"""What a lens request costs the on-demand workers, in positions (``LIMITS["lens"]`` weighs them):
a where-else scan is its pool's positions, one quantity a fixed few (hooks on the shared network,
an ablation's or a grid's extra passes)."""

from __future__ import annotations

from analysis.heads.sample import SAMPLE_SIZE

QUANTITY_UNITS = 8


def lens_units(checked: dict) -> int:
    """The positions a checked request (``webapp.lens.lens.check_request``) counts."""
    if checked.get("quantity") != "where_else":
        return QUANTITY_UNITS
    return len(checked.get("fens") or ()) or SAMPLE_SIZE
