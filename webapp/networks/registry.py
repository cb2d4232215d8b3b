"""Register networks from checkpoint files, validated by ``analysis.checkpoint``.

Used by the admin upload form, by ``manage.py serve`` (shipped weights) and by
tests. A checkpoint is loaded in full once here, so a file that registers is a
file workers can load.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from django.core.files import File
from django.db import transaction

from analysis.checkpoint import CheckpointError, file_sha256, load_checkpoint
from webapp.networks.models import Network

MATERIAL_CHECKSUM = "builtin-material-v1"


@dataclass(frozen=True)
class CheckpointFacts:
    """What the site records about a checkpoint file."""

    checksum: str
    size_bytes: int
    family: str
    preset: str
    config: dict
    parameters: int
    trained: bool
    provenance: dict
    metrics: dict


def inspect_checkpoint(path: Path) -> CheckpointFacts:
    """Load the checkpoint (raises ``CheckpointError`` with the reason) and describe it."""
    model, meta = load_checkpoint(path)
    parameters = sum(p.numel() for p in model.parameters())
    return CheckpointFacts(
        checksum=file_sha256(path), size_bytes=path.stat().st_size, family=meta.family,
        preset=_preset_name(meta.family, meta.config), config=meta.config, parameters=parameters,
        trained=meta.trained, provenance=meta.provenance, metrics=meta.metrics,
    )


def _preset_name(family: str, config: dict) -> str:
    if family != "chessformer":
        return ""
    from analysis.models.chessformer import PRESETS

    for name, preset in PRESETS.items():
        if preset.to_dict() == config:
            return name
    return "custom"


def default_card(facts: CheckpointFacts, name: str) -> str:
    """A model card from the checkpoint's own metadata (used when no card file ships)."""
    status = "trained" if facts.trained else "UNTRAINED (random initialisation: its outputs mean nothing)"
    lines = [f"# {name}", "", f"- Status: {status}", f"- Family: {facts.family}"
             + (f" ({facts.preset})" if facts.preset else ""),
             f"- Parameters: {facts.parameters:,}", f"- SHA-256: {facts.checksum}"]
    if facts.provenance:
        lines += ["", "## Provenance", "", "```", json.dumps(facts.provenance, indent=2, sort_keys=True), "```"]
    if facts.metrics:
        lines += ["", "## Metrics", "", "```", json.dumps(facts.metrics, indent=2, sort_keys=True), "```"]
    return "\n".join(lines)


def apply_facts(network: Network, facts: CheckpointFacts) -> None:
    network.kind = Network.Kind.CHECKPOINT
    network.checksum = facts.checksum
    network.size_bytes = facts.size_bytes
    network.family = facts.family
    network.preset = facts.preset
    network.config = facts.config
    network.parameters = facts.parameters
    network.trained = facts.trained
    network.provenance = facts.provenance
    network.metrics = facts.metrics
    network.has_policy = network.has_wdl = network.has_attention = facts.family == "chessformer"


@transaction.atomic
def register_checkpoint(path: Path, name: str, *, card: str | None = None, is_default: bool = False,
                        queue: str = Network.Queue.CPU) -> Network:
    """Register ``path`` under ``name`` (idempotent per checksum); returns the network."""
    path = Path(path)
    facts = inspect_checkpoint(path)
    existing = Network.objects.filter(checksum=facts.checksum).first()
    if existing is not None:
        network = existing
    else:
        if Network.objects.filter(name=name).exists():
            raise CheckpointError(f"a different network is already registered as {name!r}")
        network = Network(name=name, queue=queue)
        apply_facts(network, facts)
        with path.open("rb") as handle:
            network.file.save(path.name, File(handle), save=False)
    network.card = card if card is not None else (network.card or default_card(facts, network.name))
    if is_default:
        Network.objects.exclude(pk=network.pk).update(is_default=False)
        network.is_default = True
    network.active = True
    network.save()
    return network


def ensure_material_network() -> Network:
    """The material baseline: always available, needs no file and no model."""
    network, _ = Network.objects.get_or_create(
        checksum=MATERIAL_CHECKSUM,
        defaults=dict(name="material", kind=Network.Kind.MATERIAL, family="material", trained=False,
                      has_policy=False, has_wdl=False, has_attention=False, queue=Network.Queue.CPU,
                      card="# material\n\nNot a network: the material balance (P=1, N=B=3, R=5, Q=9) "
                           "mapped to an expected score with the ChessBench win% curve, and a "
                           "uniform policy. A baseline for comparison."),
    )
    return network
