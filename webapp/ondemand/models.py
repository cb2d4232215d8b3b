"""The abstract row every per-position cache shares: which network and position, and how far."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class PositionCache(models.Model):
    """One computation for one position (``position_key``) on one network (``network_checksum``),
    made by a worker on demand and kept: the same request is answered from here. ``created_at`` is
    when the current computation was queued (a retry restarts it)."""

    class Status(models.TextChoices):
        PENDING = "pending"
        READY = "ready"
        FAILED = "failed"

    position_key = models.CharField(max_length=64)
    network_checksum = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True

    def pending_for_s(self) -> float:
        """Seconds since the current computation was queued."""
        return (timezone.now() - self.created_at).total_seconds()
