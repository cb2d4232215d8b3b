"""Concept atlases on the site: who can have one, queue it on the background lane, compute and store
it with progress (a worker), and read it back. Versioned: an atlas stored by an older rule
(``VERSION``) reads as missing and is computed again when asked."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from webapp.networks.lookup import withdrawal
from webapp.networks.models import Network
from webapp.probes.concepts import CONCEPTS, AtlasSettings
from webapp.probes.models import ConceptAtlas
from workers import dispatch

log = logging.getLogger(__name__)

VERSION = 1
TASK = "sightline.compute_concept_atlas"


def atlas_settings() -> AtlasSettings:
    """The site's atlas (``SIGHTLINE_CONCEPT_POSITIONS`` positions per concept; tests make it small)."""
    fens = getattr(settings, "SIGHTLINE_CONCEPT_FENS", None)
    return AtlasSettings(positions=getattr(settings, "SIGHTLINE_CONCEPT_POSITIONS", 2000),
                         concepts=tuple(getattr(settings, "SIGHTLINE_CONCEPT_LIST", CONCEPTS)),
                         fens=None if fens is None else tuple(fens),
                         components=getattr(settings, "SIGHTLINE_CONCEPT_COMPONENTS", 256),
                         bootstrap=getattr(settings, "SIGHTLINE_CONCEPT_BOOTSTRAP", 200))


def why_not(network: Network) -> str:
    """Why ``network`` can have no concept atlas ("" when it can): probes read readout points. Read
    from the network's stored lens description (the web process loads no family's model code)."""
    from analysis.lens.description import LensDescription

    if network.kind != Network.Kind.CHECKPOINT:
        return f"{network.name} is not a neural network with readout points, so there is nothing to probe."
    return LensDescription.from_json(network.lens_description or {}).why_not("lens") or ""


def is_stale(row: ConceptAtlas | None) -> bool:
    return bool(row) and row.status == ConceptAtlas.Status.READY and (row.data or {}).get("version", 0) < VERSION


def ready_row(network: Network) -> ConceptAtlas | None:
    row = ConceptAtlas.objects.filter(network=network, status=ConceptAtlas.Status.READY).first()
    return None if row is None or is_stale(row) else row


def request_atlas(network: Network, *, again: bool = False) -> ConceptAtlas | None:
    """Queue the atlas unless a current one is ready or on its way (None: the network cannot have one
    or is out of service). The task is sent once the row is committed; when the broker cannot take it
    the row is put back as it was and ``BrokerUnavailable`` raised."""
    if why_not(network) or withdrawal(network):
        return None
    row, created = ConceptAtlas.objects.get_or_create(network=network)
    if not (created or again or row.status == ConceptAtlas.Status.FAILED or is_stale(row)):
        return row
    before = {"status": row.status, "done": row.done, "total": row.total, "error": row.error}
    ConceptAtlas.objects.filter(pk=row.pk).update(status=ConceptAtlas.Status.QUEUED, done=0, total=0, error="")
    transaction.on_commit(lambda: _dispatch(network, row.pk, None if created else before))
    row.refresh_from_db()
    return row


def _dispatch(network: Network, row_id: int, before: dict | None) -> None:
    try:
        dispatch.send_task(TASK, [network.pk], queue=settings.SIGHTLINE_BACKGROUND_QUEUE)
    except dispatch.BrokerUnavailable:
        queued = ConceptAtlas.objects.filter(pk=row_id, status=ConceptAtlas.Status.QUEUED)
        if before is None:
            queued.delete()
        else:
            queued.update(**before)
        raise


def compute_and_store(network: Network, config: AtlasSettings | None = None, evaluator=None) -> ConceptAtlas:
    """Compute the atlas here and now with progress (a worker passes its shared ``evaluator``)."""
    from contextlib import nullcontext

    from analysis.checkpoint import load_evaluator
    from analysis.lens import lens_for
    from analysis.probes.activations import untrained_copy
    from webapp.probes.concepts import atlas

    config = config or atlas_settings()
    row, _ = ConceptAtlas.objects.get_or_create(network=network)
    _update(row, status=ConceptAtlas.Status.RUNNING, done=0, total=1, error="")
    try:
        evaluator = evaluator or load_evaluator(network.path, None, name=network.name)
        hold = evaluator.exclusive() if hasattr(evaluator, "exclusive") else nullcontext(evaluator)
        with hold as inner:
            adapter = lens_for(inner.model, inner.encoding)
            untrained = lens_for(untrained_copy(inner.model, config.seed), inner.encoding)
            data = atlas(adapter, untrained, config, lambda done, total: _update(row, done=done, total=total))
    except Exception as exc:
        log.exception("concept atlas of %s failed", network.name)
        _update(row, status=ConceptAtlas.Status.FAILED, error=f"{type(exc).__name__}: {exc}")
        raise
    stamp = timezone.now().strftime("%Y%m%dT%H%M%S.%f")
    _update(row, status=ConceptAtlas.Status.READY, data={**data, "version": VERSION, "stamp": stamp})
    row.refresh_from_db()
    return row


def _update(row: ConceptAtlas, **fields) -> None:
    ConceptAtlas.objects.filter(pk=row.pk).update(**fields)


def summary(row: ConceptAtlas) -> dict:
    """The atlas without its probes' weights: what the page and the API show."""
    data = row.data or {}
    return {"network": row.network.name, "version": data.get("version"), "points": data.get("points", []),
            "settings": data.get("settings", {}), "concepts": data.get("concepts", {})}


def table(row: ConceptAtlas) -> list[dict]:
    """One row per concept for the page: best point, its score and control, selectivity (or why none)."""
    out = []
    for name, entry in (row.data or {}).get("concepts", {}).items():
        best = entry.get("best_point")
        at = row.data["points"].index(best) if best else None
        out.append({"name": name, "kind": entry.get("kind", ""), "metric": entry.get("metric", ""),
                    "best_point": best, "why": entry.get("why"), "balance": entry.get("balance"),
                    "trained": entry["trained"][at] if at is not None else None,
                    "untrained": entry["untrained"][at] if at is not None else None,
                    "input": entry.get("input"), "selectivity": (entry.get("selectivity") or {}).get("untrained"),
                    "strip": [None if c is None else c["score"] for c in entry.get("trained", [])]})
    return out
