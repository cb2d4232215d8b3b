"""The abstract row every per-position cache shares: which network and position, how far, who
asked and at what cost (the fair-use limits), and which worker holds it (its lease)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class PositionCache(models.Model):
    """One computation for one position (``position_key``) on one network (``network_checksum``),
    made by a worker on demand and kept: the same request is answered from here. ``created_at`` is
    when the current computation was queued (a retry restarts it); ``client`` (a hashed key,
    ``webapp.ondemand.clients``) and ``cost`` (estimated worker seconds) are its asker's and what it
    counts against their limits while pending; ``lease_owner``/``lease_until`` the worker computing it
    (``webapp.ondemand.lease``)."""

    class Status(models.TextChoices):
        PENDING = "pending"
        READY = "ready"
        FAILED = "failed"

    position_key = models.CharField(max_length=64)
    network_checksum = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    client = models.CharField(max_length=16, blank=True, default="")
    cost = models.FloatField(default=0.0)
    lease_owner = models.CharField(max_length=32, blank=True, default="")
    lease_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    def pending_for_s(self) -> float:
        """Seconds since the current computation was queued."""
        return (timezone.now() - self.created_at).total_seconds()
