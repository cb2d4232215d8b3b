"""Register networks from checkpoint files, validated by ``analysis.checkpoint``.

A checkpoint is loaded in full once here and run on a few probe positions, so a
file that registers is a file workers can load and whose answers are finite.
``manage.py serve`` (shipped weights) and tests register synchronously; an admin
upload is saved as "checking" and ``check_network`` runs in a worker task.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from django.core.files import File
from django.db import transaction

from analysis.checkpoint import CheckpointError, file_sha256, load_checkpoint
from analysis.evaluator import MaterialEvaluator
from analysis.lens.description import LensDescription, describe_model
from analysis.models.inference import TorchEvaluator
from analysis.models import get_family, importer_for
from analysis.checkpoint.probe import probe_network
from webapp.networks.models import Network
from webapp.networks.timing import FORWARD_KEY, time_forward
from webapp.networks.value_sanity import METRICS_KEY, site_verdict

log = logging.getLogger(__name__)

MATERIAL_CHECKSUM = "builtin-material-v1"


@dataclass(frozen=True)
class CheckpointFacts:
    """What the site records about a checkpoint file."""

    checksum: str
    size_bytes: int
    family: str
    preset: str
    config: dict
    input_encoding: str
    capabilities: dict  # Capabilities.to_dict()
    parameters: int
    trained: bool
    provenance: dict
    metrics: dict
    lens_description: dict  # LensDescription.to_json(): the web process checks lens requests against it


def inspect_checkpoint(path: Path) -> CheckpointFacts:
    """Load the checkpoint and probe it (raises ``CheckpointError`` with the reason); describe it.

    ``metrics`` are the file's, except the value sanity verdict, which is the site's own run.
    """
    model, meta = load_checkpoint(path)
    probe_network(model, meta, str(path))
    family = get_family(meta.family)
    parameters = sum(p.numel() for p in model.parameters())
    metrics = {k: v for k, v in meta.metrics.items() if k != METRICS_KEY}
    evaluator = TorchEvaluator(model, device="cpu", name=str(path), trained=meta.trained, encoding=meta.input_encoding)
    verdict = site_verdict(evaluator)
    if verdict is not None:
        metrics[METRICS_KEY] = verdict
    metrics[FORWARD_KEY] = time_forward(evaluator)
    return CheckpointFacts(
        checksum=file_sha256(path), size_bytes=path.stat().st_size, family=meta.family,
        preset=family.preset_name(meta.config), config=meta.config, input_encoding=meta.input_encoding,
        capabilities=family.capabilities(model.config).to_dict(), parameters=parameters,
        trained=meta.trained, provenance=meta.provenance, metrics=metrics,
        lens_description=describe_model(model, evaluator.encoding).to_json(),
    )


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
    network.input_encoding = facts.input_encoding
    network.capabilities = facts.capabilities
    network.parameters = facts.parameters
    network.trained = facts.trained
    network.provenance = facts.provenance
    network.metrics = facts.metrics
    network.lens_description = facts.lens_description


@transaction.atomic
def register_checkpoint(path: Path, name: str, *, card: str | None = None, is_default: bool = False,
                        queue: str = Network.Queue.CPU) -> Network:
    """Register ``path`` under ``name`` (idempotent per checksum); returns the network.

    The check (load, probe, value sanity run, timing: seconds a network) is keyed by the file's checksum
    and done once: a file already registered and checked (``already_checked``) is not loaded again, so
    ``serve``'s warm start pays only the checksum."""
    path = Path(path)
    existing = Network.objects.filter(checksum=file_sha256(path)).first()
    if existing is not None and already_checked(existing) and (card is not None or existing.card):
        network = existing
    else:
        facts = inspect_checkpoint(path)
        network = existing or _new_network(path, name, queue)
        if existing is not None and not (existing.path and existing.path.is_file()):
            _copy_file(network, path)  # the site's copy was lost
        apply_facts(network, facts)  # rows made by an older version learn what this one records
        network.card = network.card or default_card(facts, network.name)
    network.card = card if card is not None else network.card
    if is_default:
        Network.objects.exclude(pk=network.pk).update(is_default=False)
        network.is_default = True
    network.active = True
    network.status, network.status_message = Network.Status.READY, ""
    network.save()
    return network


def _new_network(path: Path, name: str, queue: str) -> Network:
    """A new row named ``name`` holding the site's copy of the file (saved by the caller)."""
    if Network.objects.filter(name=name).exists():
        raise CheckpointError(f"a different network is already registered as {name!r}")
    network = Network(name=name, queue=queue)
    _copy_file(network, path)
    return network


def _copy_file(network: Network, path: Path) -> None:
    with path.open("rb") as handle:
        network.file.save(path.name, File(handle), save=False)


def already_checked(network: Network) -> bool:
    """Whether this row holds a finished check of its file: ready, with the facts this version records
    (its forward pass timed, its lens described by this version), and the site's copy of the file still there."""
    return (network.kind == Network.Kind.CHECKPOINT and network.status == Network.Status.READY
            and FORWARD_KEY in (network.metrics or {}) and LensDescription.is_current(network.lens_description)
            and network.path is not None and network.path.is_file())


def check_network(network_id: int) -> str:
    """A worker's check of an uploaded checkpoint: "ready" with the file's facts, or "rejected"
    with the reason shown in the admin. Only a network still "checking" is checked. Another
    program's network file (a family's importer reads it) is converted here into a checkpoint,
    which replaces the upload once it is ready."""
    network = Network.objects.filter(pk=network_id, status=Network.Status.CHECKING).first()
    if network is None:
        return "not checking"
    path, uploaded, converted = network.path, network.checksum, None
    try:
        if path is None or not path.is_file():
            raise CheckpointError(f"{path}: the uploaded file is missing")
        importer = importer_for(path)
        if importer is not None:
            converted = _convert_upload(path, uploaded, importer)
        facts = inspect_checkpoint(converted or path)
        if converted is None and facts.checksum != uploaded:
            raise CheckpointError(f"{path}: the stored file changed after the upload (checksum differs)")
        _refuse_duplicate(network, facts.checksum)
    except CheckpointError as exc:  # the library's words, whichever kind of refusal it is
        _discard(converted)
        return _reject(network, _reason(exc, path, converted))
    except Exception as exc:  # a bug or a worker problem: say so in the admin, never leave it "checking"
        _discard(converted)
        log.exception("checking network %s failed", network.name)
        return _reject(network, f"the check itself failed: {type(exc).__name__}: {exc}")
    apply_facts(network, facts)
    network.card = network.card or default_card(facts, network.name)
    if converted is None:
        return _finish_check(network, Network.Status.READY, "", _FACT_FIELDS)
    network.file.name = str(converted.relative_to(Path(network.file.storage.location)))
    result = _finish_check(network, Network.Status.READY, "", _FACT_FIELDS + ("checksum", "file"), uploaded)
    _discard(converted if result != Network.Status.READY else path)
    return result


def _convert_upload(path: Path, uploaded: str, importer) -> Path:
    """The upload converted into a checkpoint beside it (whole or not at all)."""
    if file_sha256(path) != uploaded:
        raise CheckpointError(f"{path}: the stored file changed after the upload (checksum differs)")
    return Path(importer.convert(path, path.with_name(f"{uploaded[:16]}.safetensors")))


def _reject(network: Network, reason: str) -> str:
    """Record the refusal and delete the refused file: nothing of a refused upload stays on disk
    (the admin shows the reason; trying again means uploading again). A check superseded by a
    new file deletes nothing, nor a file another network row names."""
    stored = network.file.name
    network.file.name = ""
    result = _finish_check(network, Network.Status.REJECTED, reason, ("file",))
    if result == Network.Status.REJECTED and stored and not Network.objects.filter(file=stored).exists():
        network.file.storage.delete(stored)
    return result


def _refuse_duplicate(network: Network, checksum: str) -> None:
    duplicate = Network.objects.filter(checksum=checksum).exclude(pk=network.pk).first()
    if duplicate is not None:
        raise CheckpointError(f"this network is already registered as {duplicate.name!r}")


def _reason(exc: CheckpointError, *paths) -> str:
    """The refusal without the storage paths (the admin shows the reason, not where files live)."""
    message = str(exc)
    for path in paths:
        if path is not None:
            message = message.replace(f"{path}: ", "").replace(str(path), "the uploaded file")
    return message


def _discard(path: Path | None) -> None:
    if path is not None:
        path.unlink(missing_ok=True)


# What a check learns from the file (besides the checksum the upload recorded).
_FACT_FIELDS = ("kind", "size_bytes", "family", "preset", "config", "input_encoding", "capabilities", "parameters",
                "trained", "provenance", "metrics", "card", "lens_description")


def _finish_check(network: Network, status: str, message: str, fields: tuple[str, ...] = (),
                  checked: str | None = None) -> str:
    """Record the verdict, unless the network got another file (or a verdict) while this check ran;
    ``checked``: the checksum of the file that was checked, when the verdict gives it a new one."""
    values = {name: getattr(network, name) for name in fields}
    updated = Network.objects.filter(pk=network.pk, checksum=checked or network.checksum,
                                     status=Network.Status.CHECKING) \
        .update(status=status, status_message=message, **values)
    return status if updated else "superseded"


def ensure_material_network() -> Network:
    """The material baseline: always available, needs no file and no model."""
    network, _ = Network.objects.get_or_create(
        checksum=MATERIAL_CHECKSUM,
        defaults=dict(name="material", kind=Network.Kind.MATERIAL, family="material", trained=False,
                      status=Network.Status.READY,
                      capabilities=MaterialEvaluator.capabilities.to_dict(), queue=Network.Queue.CPU,
                      card="# material\n\nNot a network: the material balance (P=1, N=B=3, R=5, Q=9) "
                           "mapped to an expected score with the ChessBench win% curve, and a "
                           "uniform policy. A baseline for comparison."),
    )
    return network
