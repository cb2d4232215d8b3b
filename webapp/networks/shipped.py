"""Register the networks shipped in ``weights/`` (and a labelled stand-in when none is trained)."""

from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings
from django.core.files import File

from analysis.checkpoint import CheckpointError
from analysis.models import DEFAULT_FAMILY, get_family
from webapp.networks.ablations import load_ablations, variant_files, variant_network_name
from webapp.networks.figures import default_rank
from webapp.networks.models import Network
from webapp.networks.registry import ensure_material_network, register_checkpoint
from workers import dispatch

log = logging.getLogger(__name__)

STAND_IN_FAMILY = get_family(DEFAULT_FAMILY)
STAND_IN_NAME = f"{STAND_IN_FAMILY.default_preset}-untrained"


def _card_for(path: Path) -> str | None:
    """``NAME.md`` or ``NAME.card.md`` beside the checkpoint, else the folder's README.md."""
    for candidate in (path.with_suffix(".md"), path.with_name(path.stem + ".card.md"), path.with_name("README.md")):
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
    return None


def register_shipped(weights_dir: Path | None = None, var_dir: Path | None = None) -> list[Network]:
    """Every ``*.safetensors`` under ``weights_dir``; an untrained stand-in if none of them is trained."""
    weights_dir = Path(weights_dir or settings.SIGHTLINE_WEIGHTS_DIR)
    var_dir = Path(var_dir or settings.VAR_DIR)
    registered = [ensure_material_network()]
    shipped = []
    for path in sorted(weights_dir.glob("*.safetensors")):
        _retire_if_replaced(path)
        shipped.append(register_checkpoint(path, path.stem, card=_card_for(path)))
    _stop_offering_retired(weights_dir)
    trained = [n for n in shipped if n.trained]
    if trained:  # the stand-in, registered by an earlier start, is no longer offered
        _stop_offering([STAND_IN_NAME], "the untrained stand-in",
                       "a trained network is shipped, so the untrained stand-in is no longer offered")
    else:
        shipped.append(_stand_in(var_dir))
    default = min(trained or shipped, key=default_rank)  # figures.DEFAULT_RULE
    Network.objects.exclude(pk=default.pk).update(is_default=False)
    Network.objects.filter(pk=default.pk).update(is_default=True)
    return registered + shipped


def _stop_offering(names, what: str, reason: str) -> None:
    """The networks ``names`` (``what``, for the log) are no longer offered, retired for ``reason`` (the
    sentence new computations on them are refused with); their rows stay for the jobs that ran on them."""
    names = sorted(names)
    if Network.objects.filter(name__in=names, active=True).update(active=False, is_default=False, retired=reason):
        log.info("%s, no longer offered: %s", what, ", ".join(names))


def _stop_offering_retired(weights_dir: Path) -> None:
    """A network moved to ``weights/retired/`` (cb-cpu, replaced by cb-sv)."""
    _stop_offering((p.stem for p in (weights_dir / "retired").glob("*.safetensors")), "retired networks",
                   "its file was moved to weights/retired/")


def _retire_if_replaced(path: Path, name: str | None = None) -> None:
    """A new version of a shipped file takes its name (``name``, else the file's stem); the old row
    stays for its jobs, renamed and not offered.

    Results are keyed by the network's checksum, so the old version's analyses keep their values.
    """
    from analysis.checkpoint import file_sha256

    name = name or path.stem
    old = Network.objects.filter(name=name).exclude(checksum=file_sha256(path)).first()
    if old is not None:
        old.name = f"{name}@{old.checksum[:12]}"
        old.active = old.is_default = False
        old.retired = f"{path.name} holds a new version, offered as {name}"
        old.save(update_fields=["name", "active", "is_default", "retired"])
        log.info("shipped %s changed: the previous version is kept as %s (not offered)", path.name, old.name)


def register_variants(weights_dir: Path | None = None) -> list[Network]:
    """Every ablation variant under ``weights_dir/ablations/`` as ``<ablation>-<variant>``, its card beside it.

    Never a candidate for the default (``register_shipped`` ranks only the top-level files). A new file is
    checked by a worker on the background lane, as an upload is (``sightline.check_variant``), so ``serve``'s
    start pays its checksum and copy only, not its load, probe, value sanity run and timing (about 10 s a
    network on the 2-core machine); a file already registered is not checked again. A file that cannot
    be registered is logged and skipped: the site starts without it.
    """
    registered, found = [], variant_files(weights_dir)
    for name, path in found:
        try:
            registered.append(_register_variant(name, path))
        except (OSError, CheckpointError) as exc:
            log.warning("ablation variant %s (%s) not registered: %s", name, path, exc)
    _stop_offering_removed({name for name, _ in found})
    return registered


def _stop_offering_removed(present: set[str]) -> None:
    """A variant an ablation's TOML names whose export is no longer in its store (the picker would list it
    among the shipped networks)."""
    listed = {name for cfg in load_ablations() for v in cfg.variants
              if (name := variant_network_name(cfg.name, v.name)) is not None}
    _stop_offering(listed - present, "ablation variants whose files are gone",
                   "its file is gone from its ablation's store")


def _register_variant(name: str, path: Path) -> Network:
    """A new file: its row, "checking", with the site's copy of the file; a known one: its card refreshed,
    and offered again if a start had found its file gone.
    A "checking" row (new, or left so by a start whose check never ran) gets its check queued."""
    from analysis.checkpoint import file_sha256

    checksum, card = file_sha256(path), _card_for(path)
    network = Network.objects.filter(checksum=checksum).first()
    if network is not None and network.name != name:
        raise CheckpointError(f"the same file is already registered as {network.name!r}")
    if network is None:
        _retire_if_replaced(path, name)
        network = Network(name=name, checksum=checksum, size_bytes=path.stat().st_size, kind=Network.Kind.CHECKPOINT,
                          status=Network.Status.CHECKING, queue=Network.Queue.CPU, card=card or "")
        with path.open("rb") as handle:
            network.file.save(path.name, File(handle), save=False)
        network.save()
    elif not network.active or (card is not None and card != network.card):
        network.active = True
        network.card = card if card is not None else network.card
        network.save(update_fields=["active", "card"])
    if network.status == Network.Status.CHECKING:
        _queue_check(network)
    return network


def _queue_check(network: Network) -> None:
    """The variant's check for a worker; with the broker down it stays "checking" and the next start
    queues it again."""
    try:
        dispatch.send_task("sightline.check_variant", [network.pk], queue=settings.SIGHTLINE_BACKGROUND_QUEUE)
    except dispatch.BrokerUnavailable:
        log.warning("ablation variant %s: its check was not queued (the broker cannot be reached); the next "
                    "start queues it again", network.name)


def _stand_in(var_dir: Path) -> Network:
    """An untrained network of the default family's default preset (seed 0), so the site works
    before trained weights exist."""
    existing = Network.objects.filter(name=STAND_IN_NAME).first()
    if existing is not None and existing.path and existing.path.is_file():
        return existing
    import torch

    from analysis.checkpoint import save_checkpoint

    torch.manual_seed(0)
    path = var_dir / "networks" / f"{STAND_IN_NAME}.safetensors"
    model = STAND_IN_FAMILY.build(STAND_IN_FAMILY.presets[STAND_IN_FAMILY.default_preset])
    save_checkpoint(path, model, trained=False,
                    provenance={"source": "manage.py serve: random initialisation (seed 0), no training",
                                "reason": "no trained checkpoint in weights/ yet"})
    card = (f"# {STAND_IN_NAME}\n\n**UNTRAINED**: random weights (seed 0), registered because weights/ holds "
            "no trained checkpoint yet. Its evaluations, policies and attention maps mean nothing; it exists "
            "so the site can be exercised end to end.")
    log.warning("no trained network in %s: registering the UNTRAINED stand-in %s", settings.SIGHTLINE_WEIGHTS_DIR,
                STAND_IN_NAME)
    return register_checkpoint(path, STAND_IN_NAME, card=card)
