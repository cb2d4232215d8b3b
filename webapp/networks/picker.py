"""The home picker's groups, in a player's words: who plays like a human of a rating (the networks
trained on human games of one rating band, read from their cards), which are strongest here (by Elo on
Stockfish's scale), which are for taking apart (attention heads for the lens, explorer and atlas), then
the rest, then the ablations' variants one group per ablation (``ablations.picker_groups``).

A network is in one group, the first whose rule it meets, in that order; within a group the strongest
comes first.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from webapp.networks.ablations import picker_groups

HUMAN = "Plays like a human of a rating"
STRONGEST = "Strongest here"
TAKING_APART = "For taking apart"
OTHERS = "Baseline and others"

# A card says so in its own words: "Rating band: trained on Lichess games between players rated 1100-1199".
_BAND = re.compile(r"Rating band:\s*trained on (\w+) games between players rated (\d{3,4})-(\d{3,4})")


@dataclass(frozen=True)
class HumanBand:
    """The ratings of the human games a network learnt to imitate."""

    site: str
    low: int
    high: int

    @property
    def text(self) -> str:
        return f"plays like a {self.site} player rated {self.low}-{self.high}"


def human_band(card: str) -> HumanBand | None:
    found = _BAND.search(card or "")
    return HumanBand(found.group(1), int(found.group(2)), int(found.group(3))) if found else None


@dataclass(frozen=True)
class Choice:
    """One option: the network and its label (the human band first where it has one)."""

    network: object
    label: str


def groups(offered) -> list[tuple[str, list[Choice]]]:
    """[(group label, its choices)] for the home picker; empty groups are left out."""
    shipped, variants = picker_groups(offered)
    sorted_ = sorted(shipped, key=_elo_order)
    bands = {n.pk: human_band(n.card) for n in sorted_}
    human = [n for n in sorted_ if bands[n.pk] is not None]
    rest = [n for n in sorted_ if bands[n.pk] is None]
    strongest = _strongest(rest)
    apart = [n for n in rest if n not in strongest and n.caps.attention is not None and n.trained]
    others = [n for n in rest if n not in strongest and n not in apart]
    found = [(HUMAN, [Choice(n, _human_label(n, bands[n.pk])) for n in human]),
             (STRONGEST, [Choice(n, n.choice_label) for n in strongest]),
             (TAKING_APART, [Choice(n, f"{n.choice_label}, {_heads(n)}") for n in apart]),
             (OTHERS, [Choice(n, n.choice_label) for n in others])]
    found += [(label, [Choice(n, n.choice_label) for n in group]) for label, group in variants]
    return [(label, choices) for label, choices in found if choices]


def _human_label(network, band: HumanBand) -> str:
    """Who it plays like first; the value flag kept, as every option shows it."""
    flag = f" [{network.value_sanity.label}]" if network.value_sanity.flagged else ""
    return f"{network.name}, {band.text}: {network.strength.headline}{flag}"


def _elo_order(network) -> tuple:
    rating = network.strength.rating
    return (-(rating.value if rating is not None else -math.inf), network.name)


def _strongest(networks: list) -> list:
    """The trained networks whose 95% interval reaches the strongest one's: those the matches cannot
    tell from it (with no interval, the strongest alone)."""
    rated = [n for n in networks if n.trained and n.strength.rating is not None]
    if not rated:
        return []
    best = rated[0].strength.rating
    floor = best.low if best.low is not None else best.value
    return [n for n in rated if (n.strength.rating.high if n.strength.rating.high is not None
                                 else n.strength.rating.value) >= floor]


def _heads(network) -> str:
    layers, heads = network.caps.attention
    return f"{layers} layers x {heads} heads"
