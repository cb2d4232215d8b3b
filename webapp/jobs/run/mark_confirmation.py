"""Engine marks that say "?" or "??" are confirmed at a higher budget before they are shown.

At the engine lane's budget (100,000 nodes by default) Stockfish is too shallow in sharp positions
and can call a sound move a mistake. So a mistake or blunder found at that budget is checked: the
engine values the position before the move and after it again at ``factor`` times the nodes, and
the mark is made from those deeper values. A deeper search can only keep the mark or lower it
(a mark the shallow search did not give is never added here); until the deeper values are known
the move shows no mark ("being checked").
"""

from __future__ import annotations

from dataclasses import dataclass

from analysis.engines.reference import MAX_NODES

CHECKED = ("?", "??")  # the glyphs confirmed before they are shown
SEVERITY = {None: 0, "?!": 1, "?": 2, "??": 3}


@dataclass(frozen=True)
class Confirmation:
    """How marks are confirmed: the deeper budget is ``factor`` times the lane's, at most ``max_nodes``."""

    factor: int = 8
    max_nodes: int = MAX_NODES

    def nodes(self, lane_nodes: int) -> int:
        return min(self.max_nodes, lane_nodes * self.factor)


CONFIRMATION = Confirmation()


def needs_confirmation(judgement: dict | None) -> bool:
    """Whether a judgement made at the lane's budget must be searched again before it is shown."""
    return judgement is not None and judgement.get("glyph") in CHECKED


def pending(shallow: dict, nodes: int) -> dict:
    """The judgement while its confirmation runs (or never came: the engine stopped): no mark."""
    return {**shallow, "glyph": None, "name": None, "shallow_glyph": shallow["glyph"], "confirm_nodes": nodes,
            "confirming": True,
            "reason": f"{shallow['glyph']} at the lane's budget, being checked at {nodes:,} nodes"}


def confirmed(shallow: dict, deep: dict, nodes: int) -> dict:
    """The deeper judgement, never more severe than the shallow one; says what the shallow search said."""
    out = dict(deep) if SEVERITY[deep.get("glyph")] <= SEVERITY[shallow["glyph"]] else dict(shallow)
    out.update(shallow_glyph=shallow["glyph"], confirm_nodes=nodes)
    if out.get("glyph") != shallow["glyph"]:
        lowered = out.get("glyph") or "no mark"
        out["reason"] = f"{shallow['glyph']} at the lane's budget, {lowered} at {nodes:,} nodes"
    return out
