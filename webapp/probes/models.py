"""A network's concept atlas (computed once, in the background) and the Concepts panel's cache of
one position's scores (on demand, per position, like the lens's)."""

from __future__ import annotations

from django.db import models

from webapp.networks.models import Network
from webapp.ondemand.models import PositionCache


class ConceptAtlas(models.Model):
    """Every concept's probe at every readout point of one network, beside its untrained and input
    controls (``webapp.probes.atlas``); ``data`` holds the summary the page shows and, under
    ``probes``, each fitted probe as a linear map (``webapp.probes.maps``) for the panel."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        READY = "ready"
        FAILED = "failed"

    network = models.OneToOneField(Network, on_delete=models.CASCADE, related_name="concept_atlas")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    data = models.JSONField(default=dict, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"concept atlas of {self.network.name} ({self.status})"


class ConceptScores(PositionCache):
    """One position's concept scores along the readout points, from the network's stored atlas
    (``stamp``: which atlas; a recomputed atlas asks again)."""

    stamp = models.CharField(max_length=64)
    fen = models.CharField(max_length=100)
    data = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["position_key", "network_checksum", "stamp"],
                                               name="unique_concept_scores")]
