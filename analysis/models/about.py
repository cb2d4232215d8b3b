"""What the site says of a family's networks without loading them: a family's ``FamilyAbout``.

The web process shows these (the search offered by default, how a position's value is made, why
there are no attention maps, whether lc0 can search the network) on every page that names a network,
and must not import torch for them; so they live in a torch-free module of the family's package
(``analysis.models.ABOUTS`` names it), and the family's ``ModelFamily`` carries the same object.
"""

from __future__ import annotations

from dataclasses import dataclass

from analysis.displayed_value import STATIC, DisplayedValue


@dataclass(frozen=True)
class FamilyAbout:
    # The search the site runs when a user names none (None: the site's own default), for a family
    # that brings a search made for its networks: a search name of ``analysis.search_catalogue``.
    default_search: str | None = None
    # Why its networks have no attention maps, in a sentence the site shows where the explorer and
    # the head atlas would be ("": the site's generic "has no attention maps").
    no_attention_reason: str = ""
    # lc0's own search can run its networks (written back in lc0's format by ``analysis.models.lc0.convert.export``):
    # the site's "compare with lc0". Where it cannot, ``no_lc0_reason`` may say why in a sentence.
    lc0_search: bool = False
    no_lc0_reason: str = ""
    # The value the site shows for a position (the evaluation lane, its graph, the network's marks):
    # ``analysis.displayed_value``'s STATIC (one forward pass) or QUIESCENCE (for networks that were
    # only ever read at the quiet leaves of a search).
    displayed_value: DisplayedValue = STATIC


PLAIN = FamilyAbout()  # a family with nothing to say beyond the site's defaults
