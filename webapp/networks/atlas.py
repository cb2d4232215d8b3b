"""Head atlases on the site: queue one for a network, compute and store it (in a worker or the
``head_atlas`` command), and read it back for the pages."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction

from analysis.heads import AtlasConfig, HeadMeasurements, compute_atlas
from analysis.heads.atlas import ATLAS_VERSION
from webapp.networks.lookup import withdrawal
from webapp.networks.models import HeadAtlas as HeadAtlasRow
from webapp.networks.models import Network
from workers import dispatch

log = logging.getLogger(__name__)


def wants_atlas(network: Network) -> bool:
    return network.kind == Network.Kind.CHECKPOINT and network.caps.attention is not None


def is_stale(row: HeadAtlasRow | None) -> bool:
    """A finished atlas scored by an older rule (``ATLAS_VERSION``): shown as missing, computed again."""
    return bool(row) and row.status == HeadAtlasRow.Status.READY and (row.data or {}).get("version", 1) < ATLAS_VERSION


def already_computed(network: Network) -> bool:
    """Whether the network's atlas is ready and current. A task that finds it so is a redelivered
    message: an atlas that took longer than the broker's visibility timeout is delivered again
    when it ends, and computing it again (past the timeout again) would loop for ever, holding a
    worker slot the analyses wait for. Asking for it again sets the row back to queued first."""
    row = HeadAtlasRow.objects.filter(network=network).first()
    return bool(row) and row.status == HeadAtlasRow.Status.READY and not is_stale(row)


def request_atlas(network: Network, *, again: bool = False) -> HeadAtlasRow | None:
    """Queue the atlas of ``network`` unless it has a current one (or one is on its way, or ``again``);
    None for a network without attention or out of service (``lookup.withdrawal``: withdrawn or retired). The task is sent once the row is committed; when the
    broker cannot take it, the row is put back as it was (a new one deleted) and
    ``BrokerUnavailable`` raised, so no atlas is left queued without a task."""
    if not wants_atlas(network) or withdrawal(network):
        return None
    row, created = HeadAtlasRow.objects.get_or_create(network=network)
    if not (created or again or row.status == HeadAtlasRow.Status.FAILED or is_stale(row)):
        return row
    before = {"status": row.status, "done": row.done, "total": row.total, "error": row.error}
    HeadAtlasRow.objects.filter(pk=row.pk).update(status=HeadAtlasRow.Status.QUEUED, done=0, total=0, error="")
    transaction.on_commit(lambda: _dispatch(network, row.pk, None if created else before))
    row.refresh_from_db()
    return row


def _dispatch(network: Network, row_id: int, before: dict | None) -> None:
    """Send the atlas task to the background lane (an atlas runs for minutes: never in a user's slot);
    when the broker cannot take it, withdraw the queued row (``before``:
    what it held, or None for a row made for this request) and raise."""
    try:
        dispatch.send_task("sightline.compute_head_atlas", [network.pk], queue=settings.SIGHTLINE_BACKGROUND_QUEUE)
    except dispatch.BrokerUnavailable:
        queued = HeadAtlasRow.objects.filter(pk=row_id, status=HeadAtlasRow.Status.QUEUED)
        if before is None:
            queued.delete()
        else:
            queued.update(**before)
        raise


def compute_and_store(network: Network, config: AtlasConfig = AtlasConfig(), device: str | None = None,
                      evaluator=None) -> HeadAtlasRow:
    """Compute the atlas here and now, with progress: in a worker (``evaluator`` from its model
    cache, sharing the loaded network and its thread settings) or in the command (loaded here)."""
    from analysis.checkpoint import load_evaluator

    row, _ = HeadAtlasRow.objects.get_or_create(network=network)
    # Two passes over the sample, shown as one progress: the patterns, then each head removed.
    _update(row, status=HeadAtlasRow.Status.RUNNING, done=0, total=2 * config.positions, error="")
    try:
        evaluator = evaluator or load_evaluator(network.path, device, name=network.name)
        atlas = compute_atlas(evaluator, config, progress=lambda done, total: _update(row, done=done, total=2 * total))
        importance = causal_importance(evaluator, config.positions, lambda done, total: _update(
            row, done=total + done, total=2 * total))
    except Exception as exc:
        log.exception("head atlas of %s failed", network.name)
        _update(row, status=HeadAtlasRow.Status.FAILED, error=f"{type(exc).__name__}: {exc}")
        raise
    _update(row, status=HeadAtlasRow.Status.READY, data={**atlas.to_dict(), "importance": importance})
    row.refresh_from_db()
    return row


def causal_importance(evaluator, positions: int, progress) -> dict:
    """Each head's measured effect over the same sample (``analysis.lens.atlas.causal_atlas``: mean
    policy KL and mean |change of expected score| when it is removed), or ``{"unavailable": why}``
    for a network whose lens cannot remove heads. A worker's shared network is held alone while
    the lens hooks it (``SharedBatcher.exclusive``)."""
    from contextlib import nullcontext

    from analysis.heads.sample import load_sample
    from analysis.lens import LensUnavailable, lens_for
    from analysis.lens.atlas import causal_atlas

    hold = evaluator.exclusive() if hasattr(evaluator, "exclusive") else nullcontext(evaluator)
    with hold as inner:
        try:
            adapter = lens_for(inner.model, inner.encoding)
            return causal_atlas(adapter, load_sample(positions), progress=progress).to_dict()
        except LensUnavailable as exc:
            return {"unavailable": str(exc)}


def _update(row: HeadAtlasRow, **fields) -> None:
    HeadAtlasRow.objects.filter(pk=row.pk).update(**fields)


def ready_atlas(network: Network) -> HeadMeasurements | None:
    row = HeadAtlasRow.objects.filter(network=network, status=HeadAtlasRow.Status.READY).first()
    return HeadMeasurements.from_dict(row.data) if row and not is_stale(row) else None


def atlas_rows(atlas: HeadMeasurements, importance: dict | None = None) -> list[list[dict]]:
    """The grid's cells, layer by layer: label, its lift (none for unlabelled), static-ness and, with
    the causal atlas, its importance (``kl``, ``dscore``: None where the network lacks it)."""
    measured = importance or {}

    def effect(key, layer, head):
        return None if measured.get(key) is None else measured[key][layer][head]

    return [[{"layer": layer, "head": head, "label": label, "static": atlas.static[layer][head],
              "lift": atlas.lift[label][layer][head] if label in atlas.lift else None,
              "kl": effect("kl", layer, head), "dscore": effect("score", layer, head)}
             for head, label in enumerate(row)] for layer, row in enumerate(atlas.labels)]


def ready_importance(network: Network) -> dict | None:
    """The causal atlas stored with the network's current atlas (None: computed before it existed)."""
    row = HeadAtlasRow.objects.filter(network=network, status=HeadAtlasRow.Status.READY).first()
    return (row.data or {}).get("importance") if row and not is_stale(row) else None
