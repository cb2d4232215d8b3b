"""Networks the site can analyse with: uploaded checkpoints and the material baseline."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import chess
from django.db import models

from analysis.displayed_value import STATIC, DisplayedValue
from analysis.encoding import get_encoding
from analysis.evaluator import Capabilities, MaterialEvaluator, key_digest
from analysis.models import get_about, importer_for
from analysis.search_catalogue import DEFAULT_SEARCH, SEARCHES
from webapp.networks.figures import Strength, strength
from webapp.networks.one_agent import puzzle_agent, with_one_agent
from webapp.networks.twins import pooled_metrics, tensor_digest
from webapp.networks.value_sanity import ValueSanity, read_value_sanity

if TYPE_CHECKING:
    from analysis.models.about import FamilyAbout


def checkpoint_upload_path(instance: "Network", filename: str) -> str:
    # Name files by checksum: two uploads of one file cannot diverge, and names never collide.
    # The whole ending of a file some family imports (``.pb.gz``) is kept: it says how to read it.
    importer = importer_for(filename)
    suffix = (next(s for s in importer.suffixes if filename.lower().endswith(s)) if importer
              else Path(filename).suffix.lower() or ".bin")
    return f"networks/{instance.checksum[:16]}{suffix}"


class NetworkQuerySet(models.QuerySet):
    def offered(self) -> "NetworkQuerySet":
        """What users may analyse with: active, and checked by a worker (an upload being
        checked, or refused, is never offered)."""
        return self.filter(active=True, status=Network.Status.READY)


class Network(models.Model):
    """A network users can pick. ``checksum`` identifies the weights everywhere results are cached."""

    class Status(models.TextChoices):
        CHECKING = "checking", "checking (a worker is loading it)"
        READY = "ready", "ready"
        REJECTED = "rejected", "rejected"

    class Kind(models.TextChoices):
        CHECKPOINT = "checkpoint", "checkpoint"
        MATERIAL = "material", "material baseline (no network)"

    class Queue(models.TextChoices):
        GPU = "gpu", "gpu"
        CPU = "cpu", "cpu"

    name = models.SlugField(max_length=64, unique=True)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.CHECKPOINT)
    family = models.CharField(max_length=64, help_text="Model family, e.g. chessformer")
    preset = models.CharField(max_length=64, blank=True)
    config = models.JSONField(default=dict, blank=True)
    file = models.FileField(upload_to=checkpoint_upload_path, blank=True, max_length=300)
    checksum = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the checkpoint file")
    size_bytes = models.BigIntegerField(default=0)
    parameters = models.BigIntegerField(default=0)
    trained = models.BooleanField(default=False)
    card = models.TextField(blank=True, help_text="Model card (markdown)")
    provenance = models.JSONField(default=dict, blank=True)
    metrics = models.JSONField(default=dict, blank=True)
    input_encoding = models.CharField(max_length=64, blank=True,
                                      help_text="The board encoding the checkpoint was trained on (analysis.encoding)")
    capabilities = models.JSONField(default=dict, blank=True,
                                    help_text="What its outputs offer: policy, value, WDL, action values, "
                                              "attention [layers, heads] (analysis.evaluator.Capabilities)")
    lens_description = models.JSONField(default=dict, blank=True,
                                        help_text="What the lens can take apart, computed when a worker checks the "
                                                  "network (analysis.lens.description.LensDescription.to_json())")
    queue = models.CharField(max_length=8, choices=Queue.choices, default=Queue.CPU,
                             help_text="Celery queue whose workers run this network")
    active = models.BooleanField(default=True, help_text="Offered on the home page")
    # Not offered (``active`` off): withdrawn by an admin when this is blank, else retired by ``serve``
    # for this reason (``shipped``). New computations on it are refused either way (``lookup.in_service``).
    retired = models.CharField(max_length=200, blank=True,
                               help_text="Why serve stopped offering it (blank while offered, or when an admin withdrew it)")
    is_default = models.BooleanField(default=False)
    # An admin upload is saved as "checking"; a worker loads it and sets "ready" or "rejected".
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.CHECKING)
    status_message = models.TextField(blank=True, help_text="Why the check refused the checkpoint")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = NetworkQuerySet.as_manager()

    class Meta:
        ordering = ["-is_default", "name"]

    def __str__(self) -> str:
        return f"{self.name} (untrained)" if self.is_untrained else self.name

    def save(self, *args, **kwargs):
        """Offered again (by an admin or ``serve``): the reason it was retired no longer holds."""
        if self.active and self.retired:
            self.retired = ""
            if kwargs.get("update_fields") is not None:
                kwargs["update_fields"] = {*kwargs["update_fields"], "retired"}
        super().save(*args, **kwargs)

    @property
    def is_untrained(self) -> bool:
        """Only checkpoints can be (un)trained; the material baseline is a heuristic."""
        return self.kind == self.Kind.CHECKPOINT and not self.trained

    @property
    def value_sanity(self) -> ValueSanity:
        """The value sanity suite's verdict from the checkpoint's metrics (flagged until passed)."""
        return read_value_sanity(self.metrics, is_network=self.kind == self.Kind.CHECKPOINT)

    @property
    def puzzle_agent(self) -> str | None:
        """The agent its puzzles are shown with (``figures.PUZZLE_AGENTS``); None for the material baseline."""
        return puzzle_agent(self.caps.policy) if self.kind == self.Kind.CHECKPOINT else None

    @property
    def strength(self) -> Strength:
        """Its measured figures (puzzles, STS, Elo vs Stockfish 1350), read from its metrics with the
        matches of networks that have its very weights pooled in (``twins``), and its puzzles by the one
        agent every network is shown with (``one_agent``)."""
        metrics = pooled_metrics(self.metrics, self.twins_metrics)
        return strength(with_one_agent(metrics, self.checksum), self.puzzle_agent)

    @cached_property
    def twins_metrics(self) -> list[dict]:
        """The metrics of the other registered networks whose tensors are byte for byte this one's."""
        digest = tensor_digest(self.path) if self.kind == self.Kind.CHECKPOINT else None
        if digest is None:
            return []
        others = Network.objects.filter(kind=self.Kind.CHECKPOINT).exclude(pk=self.pk).exclude(file="")
        return [n.metrics for n in others if tensor_digest(n.path) == digest]

    @property
    def choice_label(self) -> str:
        """The home dropdown's option: the label and the headline strength."""
        if self.kind == self.Kind.MATERIAL:
            return f"{self.display_label}: baseline, not a network"
        return f"{self.display_label}: {self.strength.headline}"

    @property
    def caps(self) -> Capabilities:
        return Capabilities.from_dict(self.capabilities or {})

    @property
    def about(self) -> FamilyAbout | None:
        """What its family says of its networks (read without loading the family or torch); None for
        the material baseline (no family) and for a family this version of the site does not know."""
        if self.kind != self.Kind.CHECKPOINT:
            return None
        try:
            return get_about(self.family)
        except ValueError:
            return None

    @property
    def default_search(self) -> str:
        """The search run when a user names none: the family's own, else the site's default
        (also when this network lacks the policy head the family's search needs)."""
        about = self.about
        name = about.default_search if about is not None else None
        if name not in SEARCHES or (SEARCHES[name].needs_policy and not self.caps.policy):
            return DEFAULT_SEARCH
        return name

    @property
    def displayed_value(self) -> DisplayedValue:
        """How the value shown for a position is made: the family's policy (``analysis.displayed_value``);
        the network's output as it is for the material baseline and an unknown family."""
        about = self.about
        return about.displayed_value if about is not None else STATIC

    @property
    def no_attention_reason(self) -> str:
        """Why it has no attention maps, in the family's words ("" when it has maps or the family
        gives no reason: the pages then say so generically)."""
        about = self.about
        return about.no_attention_reason if about is not None and self.caps.attention is None else ""

    def position_key(self, board: chess.Board) -> str:
        """The key of what this network sees at ``board``, from the board alone: equal to the
        digest of its evaluator's ``cache_key``, so a job's keys are set when it is created."""
        if self.kind == self.Kind.MATERIAL:
            return key_digest(MaterialEvaluator.cache_key(board))
        return key_digest(get_encoding(self.input_encoding).position_key(board))

    @property
    def path(self) -> Path | None:
        return Path(self.file.path) if self.file else None

    @property
    def display_label(self) -> str:
        label = f"{self.name} ({self.family}"
        if self.parameters:
            label += f", {human_count(self.parameters)} params"
        label += ")"
        label += " [untrained]" if self.is_untrained else ""
        return label + (f" [{self.value_sanity.label}]" if self.value_sanity.flagged else "")


def human_count(n: int) -> str:
    for unit, size in (("B", 10 ** 9), ("M", 10 ** 6), ("k", 10 ** 3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


class HeadAtlas(models.Model):
    """A network's head atlas (``analysis.heads``): computed once by a worker, in the background,
    with its progress, because a large network takes minutes."""

    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        READY = "ready", "ready"
        FAILED = "failed", "failed"

    network = models.OneToOneField(Network, on_delete=models.CASCADE, related_name="head_atlas")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    done = models.IntegerField(default=0, help_text="Positions scored so far")
    total = models.IntegerField(default=0, help_text="Positions to score")
    data = models.JSONField(default=dict, blank=True, help_text="analysis.heads.HeadAtlas.to_dict()")
    error = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"head atlas of {self.network.name} ({self.status})"

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0
