"""Which value of a position the site shows for a network: a family's ``displayed_value`` policy.

Most networks are read as they are: one forward pass gives the value shown in the evaluation
lane, its graph and the network's own marks. A family whose networks were only ever read at
the quiet leaves of a search (Giraffe) declares ``QUIESCENCE``: the shown value is then the
quiescence search's (``analysis.search.quiescence``), and the static value is kept beside it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ShownValue:
    """What the site shows for one position, from the side to move's view.

    ``score``/``wdl``: the shown value; ``static_score``: the network's own output, set only
    where it is not the one shown; ``nodes``: the nodes a search spent on it (0 for none).
    """

    score: float
    wdl: tuple[float, float, float] | None
    source: str
    static_score: float | None = None
    nodes: int = 0


@dataclass(frozen=True)
class DisplayedValue:
    """A policy, by name: stored with each result (``value_source``) and part of its cache key."""

    name: str

    @property
    def is_static(self) -> bool:
        return self.name == STATIC.name


# The network's output for the position: one forward pass.
STATIC = DisplayedValue("static")
# A quiescence search (captures, queen promotions and check evasions until the position is quiet,
# alpha-beta over them) with the network's value at its leaves.
QUIESCENCE = DisplayedValue("quiescence")
