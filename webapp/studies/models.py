"""A study and its per-position results.

Each measured position is stored as its own row (``StudyItem``) the moment the worker has it, so a
study whose worker died resumes from them (``run_study(done=...)``) and ends with the result an
uninterrupted run gives. The position set is stored whole on the study before it is queued: the
worker reads it from here, never from an upload that might be gone.
"""

from __future__ import annotations

import uuid

from django.conf import settings as django_settings
from django.db import models

from webapp.networks.models import Network


class Study(models.Model):
    """(network, method, position source, settings, seed) and where its run stands."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    ACTIVE = (Status.QUEUED, Status.RUNNING)
    FINISHED = (Status.DONE, Status.FAILED, Status.CANCELLED)

    # The public id: the share link, as a game's (/studies/<id>/).
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    network = models.ForeignKey(Network, on_delete=models.PROTECT, related_name="studies")
    method = models.CharField(max_length=32)
    settings = models.JSONField(default=dict, blank=True)
    seed = models.IntegerField(default=0)
    # The position source (analysis.studies.PositionSource): its kind, and either the shipped set's
    # name or the text itself (pasted, or an uploaded file's content), kept whole.
    source_kind = models.CharField(max_length=16)
    source_name = models.CharField(max_length=100, blank=True)
    source_text = models.TextField(blank=True)
    limit = models.PositiveIntegerField(null=True, blank=True)
    # The positions as read at submission, [[id, fen], ...] by index: the drill-down's rows.
    positions = models.JSONField(default=list, blank=True)
    # A second network the method plays against (lookahead's sparring net), when it needs one.
    sparring = models.ForeignKey(Network, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    code_version = models.CharField(max_length=64, blank=True)
    result = models.JSONField(null=True, blank=True, help_text="run_study's answer without its items")
    error = models.TextField(blank=True)
    # Who started it (webapp.ondemand.clients.client_key) and, signed in, the user: the limits count by it.
    client = models.CharField(max_length=16, blank=True, default="")
    owner = models.ForeignKey(django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="studies")
    # The worker running it (webapp.ondemand.lease): renewed while it runs; a lease that ran out
    # means its worker is gone, and the study is queued again (webapp.studies.resume).
    lease_owner = models.CharField(max_length=32, blank=True, default="")
    lease_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    queued_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.method} on {self.network.name} [{self.status}]"

    @property
    def finished(self) -> bool:
        return self.status in self.FINISHED

    def position(self, index: int, result: dict) -> tuple[str, str]:
        """(id, FEN) of item ``index``: from the set stored at submission, else from the item's own
        result (positions mined in the worker carry theirs)."""
        if index < len(self.positions):
            return tuple(self.positions[index])
        return str(result.get("id", "")), str(result.get("fen", ""))

    @property
    def source_label(self) -> str:
        if self.source_kind == "puzzles":
            return f"shipped set {self.source_name}"
        if self.source_kind == "games":
            return "positions mined from the master games"
        lines = self.source_text.count("\n") + 1 if self.source_text else 0
        return {"csv": "an uploaded puzzle CSV", "pgn": "pasted or uploaded PGN",
                "fens": "a list of FENs"}.get(self.source_kind, self.source_kind) + f" ({lines} lines)"


def study_group_name(study_id) -> str:
    """The channel-layer group a study's progress goes to."""
    return f"study-{study_id}"


class StudyItem(models.Model):
    """One position's measured result (``StudyMethod.measure``), stored as soon as it is made."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items")
    index = models.PositiveIntegerField()
    result = models.JSONField()

    class Meta:
        ordering = ["index"]
        constraints = [models.UniqueConstraint(fields=["study", "index"], name="study_item_once")]
