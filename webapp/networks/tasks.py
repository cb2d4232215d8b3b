"""The networks app's Celery tasks: checking an upload, computing a head atlas.

All of them run in the background lane (``SIGHTLINE_BACKGROUND_QUEUE``, a worker of its own), so
they never wait behind analyses nor take a slot one needs.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings

from analysis.heads import AtlasConfig
from webapp.networks.atlas import already_computed, compute_and_store, request_atlas
from webapp.networks.model_cache import models
from webapp.networks.models import HeadAtlas as HeadAtlasRow
from webapp.networks.models import Network
from webapp.networks.registry import check_network as check
from workers.dispatch import BrokerUnavailable

log = logging.getLogger(__name__)


@shared_task(name="sightline.check_network", acks_late=True)
def check_network(network_id: int) -> str:
    """Load an uploaded checkpoint (meta device first, config limits, shapes), probe its outputs,
    then mark the network ready or rejected: the admin request only saved the file. A network
    found ready with attention maps then gets its head atlas queued."""
    status = check(network_id)
    if status == Network.Status.READY:
        try:
            request_atlas(Network.objects.get(pk=network_id))
        except BrokerUnavailable:  # the atlas page offers to compute it once the broker is back
            log.warning("the head atlas of network %s was not queued: the broker is down", network_id)
    return status


@shared_task(name="sightline.check_variant", acks_late=True)
def check_variant(network_id: int) -> str:
    """An ablation variant registered by ``serve`` (``shipped.register_variants``), checked as an upload
    is. Its head atlas is not queued: nine variants would hold the worker's slots for many minutes at
    every new site; its atlas page computes it when asked, and the networks page shows the labels the
    ablation's own atlas run stored."""
    return check(network_id)


@shared_task(name="sightline.compute_head_atlas", acks_late=True)
def compute_head_atlas(network_id: int) -> str:
    """Score every attention head of a network over the position sample and store its atlas
    (a background job whose progress the network's atlas page shows)."""
    network = Network.objects.filter(pk=network_id).first()
    if network is None:
        return "missing"
    if already_computed(network):  # a redelivered message (a run past the broker's visibility timeout)
        return HeadAtlasRow.Status.READY
    config = AtlasConfig(positions=settings.SIGHTLINE_ATLAS_POSITIONS)
    try:
        return compute_and_store(network, config, evaluator=models.get(network)).status
    except Exception:
        return "failed"
