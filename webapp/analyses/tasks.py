"""Celery tasks. Routing: a job goes to its network's queue (``gpu`` or ``cpu``)."""

from __future__ import annotations

import logging

from celery import shared_task

from webapp.analyses.attention import encode_maps
from webapp.analyses.gameinput import board_for
from webapp.analyses.models import AnalysisJob, AttentionMap
from webapp.analyses.publish import GroupPublisher
from workers.model_cache import models
from workers.pipeline import JobRun

log = logging.getLogger(__name__)


@shared_task(name="sightline.run_analysis", acks_late=True)
def run_analysis(job_id: str) -> str:
    job = AnalysisJob.objects.select_related("network").filter(pk=job_id).first()
    if job is None:
        log.warning("job %s does not exist (deleted before it ran)", job_id)
        return "missing"
    evaluator = models.get(job.network)
    return JobRun(job, evaluator, GroupPublisher(job.id)).run().status


@shared_task(name="sightline.compute_attention", acks_late=True)
def compute_attention(job_id: str, node_id: int) -> str:
    """Attention of every layer and head for one node of a job, stored compactly."""
    job = AnalysisJob.objects.select_related("network").get(pk=job_id)
    key = job.nodes[node_id].get("key") or job.network.position_key(board_for(job.nodes, node_id))
    entry = AttentionMap.objects.get(position_key=key, network_checksum=job.network.checksum)
    if entry.status == AttentionMap.Status.READY:
        return entry.status
    try:
        evaluator = models.get(job.network)
        board = board_for(job.nodes, node_id)
        maps = evaluator.evaluate([board], attention=True)[0].attention
        if maps is None:
            raise ValueError(f"{job.network.name} returned no attention maps")
        AttentionMap.objects.filter(pk=entry.pk).update(
            status=AttentionMap.Status.READY, layers=maps.shape[0], heads=maps.shape[1], data=encode_maps(maps))
        return AttentionMap.Status.READY
    except Exception as exc:
        log.exception("attention for job %s node %s failed", job_id, node_id)
        AttentionMap.objects.filter(pk=entry.pk).update(status=AttentionMap.Status.FAILED,
                                                        error=f"{type(exc).__name__}: {exc}")
        return AttentionMap.Status.FAILED


@shared_task(name="sightline.check_network", acks_late=True)
def check_network(network_id: int) -> str:
    """Load an uploaded checkpoint (meta device first, config limits, shapes), probe its outputs,
    then mark the network ready or rejected: the admin request only saved the file. A network
    found ready with attention maps then gets its head atlas queued."""
    from webapp.networks.atlas import request_atlas
    from webapp.networks.models import Network
    from webapp.networks.registry import check_network as check

    status = check(network_id)
    if status == Network.Status.READY:  # a network with attention gets its head atlas next
        request_atlas(Network.objects.get(pk=network_id))
    return status


@shared_task(name="sightline.compute_head_atlas", acks_late=True)
def compute_head_atlas(network_id: int) -> str:
    """Score every attention head of a network over the position sample and store its atlas
    (minutes for a large network: a background job whose progress the network's atlas page shows)."""
    from django.conf import settings

    from analysis.heads import AtlasConfig
    from webapp.networks.atlas import compute_and_store
    from webapp.networks.models import Network

    network = Network.objects.filter(pk=network_id).first()
    if network is None:
        return "missing"
    config = AtlasConfig(positions=settings.SIGHTLINE_ATLAS_POSITIONS)
    try:
        return compute_and_store(network, config, evaluator=models.get(network)).status
    except Exception:
        return "failed"


@shared_task(name="sightline.deep_search", acks_late=True)
def deep_search(deep_id: int) -> str:
    """'Analyse this position deeper': one node, a larger budget, lines published live."""
    from webapp.analyses.deeper import run
    from webapp.analyses.models import DeepSearch

    deep = DeepSearch.objects.select_related("job__network").filter(pk=deep_id).first()
    if deep is None:
        return "missing"
    return run(deep_id, models.get(deep.job.network), GroupPublisher(deep.job_id))
