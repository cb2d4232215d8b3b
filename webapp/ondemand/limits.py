"""How much on-demand work may be queued at once: every feature's limit, in one table.

A request that would queue new work over its feature's limit gets a 429 with ``Retry-After``;
work already done (or being done) is served without counting. A pending row counts while it is
younger than ``window_s`` (older, its worker was lost and it is queued again: ``lost_after_s``).
The attention maps also have a per-browser limit (``webapp.lens.attention_limits``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from webapp.ondemand.refused import Refused


@dataclass(frozen=True)
class PendingLimit:
    """At most ``most`` computations of one kind queued per ``per`` ("job" or "network")."""

    what: str  # the work, plural: "lens computations"
    most: int
    per: str
    window_s: int  # a pending row older than this no longer counts
    retry_after_s: int
    lost_after_s: float  # a pending row older than this has lost its worker: it is queued again

    def refusal(self, model, job) -> Refused | None:
        """The 429 when ``job`` (or its network) already has ``most`` rows of ``model`` pending."""
        pending = model.objects.filter(network_checksum=job.network.checksum, status=model.Status.PENDING,
                                       created_at__gte=timezone.now() - timedelta(seconds=self.window_s))
        if self.per == "job":
            pending = pending.filter(position_key__in={node["key"] for node in job.nodes if node.get("key")})
        count = pending.count()
        if count < self.most:
            return None
        scope = "of this analysis" if self.per == "job" else f"on {job.network.name}"
        return Refused(f"{count} {self.what} {scope} are queued; at most {self.most} are queued at a time. "
                       "Try again in a moment.", status=429, retry_after=self.retry_after_s)


def _visibility_timeout() -> float:
    return settings.SIGHTLINE_VISIBILITY_TIMEOUT_S


LIMITS = {
    "attention": PendingLimit("attention maps", most=8, per="job", window_s=120, retry_after_s=2,
                              lost_after_s=_visibility_timeout()),
    "lens": PendingLimit("lens computations", most=12, per="job", window_s=120, retry_after_s=2,
                         lost_after_s=_visibility_timeout()),
    "lc0": PendingLimit("comparisons with lc0", most=3, per="network", window_s=300, retry_after_s=5,
                        lost_after_s=300),
}
