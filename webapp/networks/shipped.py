"""Register the networks shipped in ``weights/`` (and a labelled stand-in when none is trained)."""

from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings

from analysis.models import DEFAULT_FAMILY, get_family
from webapp.networks.figures import default_rank
from webapp.networks.models import Network
from webapp.networks.registry import ensure_material_network, register_checkpoint

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
    trained = [n for n in shipped if n.trained]
    if trained:  # the stand-in, registered by an earlier start, is no longer offered
        Network.objects.filter(name=STAND_IN_NAME).update(active=False, is_default=False)
    else:
        shipped.append(_stand_in(var_dir))
    default = min(trained or shipped, key=default_rank)  # figures.DEFAULT_RULE
    Network.objects.exclude(pk=default.pk).update(is_default=False)
    Network.objects.filter(pk=default.pk).update(is_default=True)
    return registered + shipped


def _retire_if_replaced(path: Path) -> None:
    """A new version of a shipped file takes its name; the old row stays for its jobs, renamed and not offered.

    Results are keyed by the network's checksum, so the old version's analyses keep their values.
    """
    from analysis.checkpoint import file_sha256

    old = Network.objects.filter(name=path.stem).exclude(checksum=file_sha256(path)).first()
    if old is not None:
        old.name = f"{path.stem}@{old.checksum[:12]}"
        old.active = old.is_default = False
        old.save(update_fields=["name", "active", "is_default"])
        log.info("shipped %s changed: the previous version is kept as %s (not offered)", path.name, old.name)


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
