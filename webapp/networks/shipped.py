"""Register the networks shipped in ``weights/`` (and a labelled stand-in when none is trained)."""

from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings

from webapp.networks.models import Network
from webapp.networks.registry import ensure_material_network, register_checkpoint

log = logging.getLogger(__name__)

# Preferred default among shipped networks, best first.
PREFERRED = ("cf-small", "cf-6m", "cf-tiny")
STAND_IN_NAME = "cf-small-untrained"


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
        shipped.append(register_checkpoint(path, path.stem, card=_card_for(path)))
    trained = [n for n in shipped if n.trained]
    if trained:  # the stand-in, registered by an earlier start, is no longer offered
        Network.objects.filter(name=STAND_IN_NAME).update(active=False, is_default=False)
    else:
        shipped.append(_stand_in(var_dir))
    candidates = trained or shipped
    default = min(candidates, key=lambda n: PREFERRED.index(n.preset) if n.preset in PREFERRED else len(PREFERRED))
    Network.objects.exclude(pk=default.pk).update(is_default=False)
    Network.objects.filter(pk=default.pk).update(is_default=True)
    return registered + shipped


def _stand_in(var_dir: Path) -> Network:
    """An untrained cf-small (seed 0), so the site works before trained weights exist."""
    existing = Network.objects.filter(name=STAND_IN_NAME).first()
    if existing is not None and existing.path and existing.path.is_file():
        return existing
    import torch

    from analysis.checkpoint import save_checkpoint
    from analysis.models.chessformer import PRESETS, Chessformer

    torch.manual_seed(0)
    path = var_dir / "networks" / f"{STAND_IN_NAME}.safetensors"
    save_checkpoint(path, Chessformer(PRESETS["cf-small"]), trained=False,
                    provenance={"source": "manage.py serve: random initialisation (seed 0), no training",
                                "reason": "no trained checkpoint in weights/ yet"})
    card = ("# cf-small-untrained\n\n**UNTRAINED**: random weights (seed 0), registered because weights/ holds "
            "no trained checkpoint yet. Its evaluations, policies and attention maps mean nothing; it exists "
            "so the site can be exercised end to end.")
    log.warning("no trained network in %s: registering the UNTRAINED stand-in %s", settings.SIGHTLINE_WEIGHTS_DIR,
                STAND_IN_NAME)
    return register_checkpoint(path, STAND_IN_NAME, card=card)
