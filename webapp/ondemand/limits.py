"""Fair use of the on-demand workers: every kind's limits, in one table (``LIMITS``).

Work is counted by its cost, estimated worker seconds (units x ``seconds_per_unit``: a 512-position
scan is 512 units, not one request), while it is pending (queued or being computed; a row whose
worker is lost stops counting and is queued again by the next ask: ``OnDemand.lost``). A client
(``webapp.ondemand.clients``) may have ``per_client_s`` of one kind pending, the site ``per_site_s``;
a request over either gets a 429 whose ``Retry-After`` is the work ahead of the room it needs,
shared by the on-demand worker's slots. Work already done (or being done) is served without
counting, and a client with nothing pending is never refused by its own limit (nor the site with
nothing pending by the site's), so one large request always gets its turn. docs/api.md has the table.
The attention maps also have a per-browser rate (``webapp.lens.attention_limits``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.conf import settings

from webapp.ondemand.refused import Refused

MAX_RETRY_AFTER_S = 600


@dataclass(frozen=True)
class PendingLimit:
    """How much of one kind of work may be pending, per client and on the site, in worker seconds."""

    what: str  # the work, plural: "lens computations"
    unit: str  # what a request counts: "position scanned"
    seconds_per_unit: float  # the per-kind weight: estimated worker seconds of one unit
    per_client_s: float
    per_site_s: float
    lost_after_s: float  # a pending row no worker claimed for this long lost its message: queued again

    def cost(self, units: float) -> float:
        """The estimated worker seconds of a request of ``units``."""
        return units * self.seconds_per_unit

    def refusal(self, pending, client: str, cost: float) -> Refused | None:
        """The 429 when queueing ``cost`` more for ``client`` would pass its limit or the site's;
        ``pending``: this kind's pending rows (a queryset with ``cost``, ``client`` and ``created_at``)."""
        rows = list(pending.order_by("created_at").values_list("cost", "client"))
        mine = sum(c for c, asker in rows if asker == client)
        site = sum(c for c, _ in rows)
        if mine and mine + cost > self.per_client_s:
            wait = seconds_until_room(rows, mine + cost - self.per_client_s, client)
            return Refused(f"You have {self.what} queued worth about {_seconds(mine)} of work; each visitor may "
                           f"queue about {_seconds(self.per_client_s)} at a time. Try again in {wait} s.", status=429,
                           retry_after=wait)
        if site and site + cost > self.per_site_s:
            wait = seconds_until_room(rows, site + cost - self.per_site_s)
            return Refused(f"The site has {self.what} queued worth about {_seconds(site)} of work, as much as it "
                           f"takes at a time. Try again in {wait} s.", status=429, retry_after=wait)
        return None


def seconds_until_room(rows: list[tuple[float, str]], excess: float, client: str | None = None) -> int:
    """Seconds until ``excess`` of the pending work (the client's, or anyone's) is done: the work
    queued ahead of it, oldest first, shared by the on-demand worker's slots (1 to ``MAX_RETRY_AFTER_S``)."""
    ahead = freed = 0.0
    for cost, asker in rows:
        ahead += cost
        if client is None or asker == client:
            freed += cost
        if freed >= excess:
            break
    slots = max(1, settings.SIGHTLINE_ONDEMAND_SLOTS)
    return max(1, min(MAX_RETRY_AFTER_S, math.ceil(ahead / slots)))


def _seconds(cost: float) -> str:
    return f"{max(1, round(cost))} s"


def _visibility_timeout() -> float:
    return settings.SIGHTLINE_VISIBILITY_TIMEOUT_S


LIMITS = {
    "attention": PendingLimit("attention maps", "position", seconds_per_unit=0.1, per_client_s=30, per_site_s=120,
                              lost_after_s=_visibility_timeout()),
    # A lens quantity counts LENS_QUANTITY_UNITS positions, a where-else scan its pool (webapp.lens.costs);
    # a 512-position scan took 1.3-12.4 s on the shipped networks.
    "lens": PendingLimit("lens computations", "position", seconds_per_unit=0.025, per_client_s=60, per_site_s=240,
                         lost_after_s=_visibility_timeout()),
    # lc0's search and Sightline's MCTS, each of the nodes asked.
    "lc0": PendingLimit("comparisons with lc0", "node searched", seconds_per_unit=0.001, per_client_s=30, per_site_s=90,
                        lost_after_s=_visibility_timeout()),
    # Stockfish's nodes ("until stopped": the longest a search may run, webapp.jobs.engine_deeper).
    "engine": PendingLimit("deeper engine searches", "Stockfish node", seconds_per_unit=1e-6, per_client_s=60,
                           per_site_s=240, lost_after_s=_visibility_timeout()),
    # One position's concept scores: one forward with every point captured, then the stored probes.
    "probes": PendingLimit("concept scores", "position", seconds_per_unit=0.5, per_client_s=10, per_site_s=60,
                           lost_after_s=_visibility_timeout()),
}
