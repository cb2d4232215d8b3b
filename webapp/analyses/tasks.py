"""The analyses app's Celery tasks, found by the worker through autodiscovery.

The site sends them by name (``workers.dispatch.send_task``); the names never change, so
messages already queued still reach them. A job goes to its network's queue (``gpu`` or ``cpu``).
"""

from __future__ import annotations

import logging

from celery import shared_task, signals

from analysis.lens.answers import answer as lens_answer
from analysis.lens.answers import scan as scan_neuron
from analysis.lens.requests import stored

from webapp.analyses.attention import encode_maps
from webapp.analyses.deep_runner import run_deep_search
from webapp.analyses.gameinput import board_for
from webapp.analyses.keys import node_key
from webapp.analyses.lc0_runner import run_comparison
from webapp.analyses.models import AnalysisJob, AttentionMap, DeepSearch, Lc0Comparison, LensResult
from webapp.analyses.publish import GroupPublisher
from webapp.analyses.reaper import Reaper
from webapp.analyses.runner import JobRun
from webapp.networks.model_cache import models

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
    entry = AttentionMap.objects.filter(position_key=node_key(job, node_id),
                                        network_checksum=job.network.checksum).first()
    if entry is None or entry.status == AttentionMap.Status.READY:
        return "missing" if entry is None else entry.status
    try:
        maps = models.get(job.network).evaluate([board_for(job.nodes, node_id)], attention=True)[0].attention
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


@shared_task(name="sightline.compute_lens", acks_late=True)
def compute_lens(job_id: str, node_id: int, entry_id: int) -> str:
    """One lens quantity (``LensResult.request``) for one node of a job, on the worker's device."""
    from analysis.lens import lens_for

    entry = LensResult.objects.filter(pk=entry_id).first()
    job = AnalysisJob.objects.select_related("network").filter(pk=job_id).first()
    if entry is None or job is None or entry.status == LensResult.Status.READY:
        return "missing" if entry is None or job is None else entry.status
    try:
        if entry.request["quantity"] == "where_else":
            data = _scan(models.get(job.network), entry)
        else:
            with models.get(job.network).exclusive() as evaluator:  # the lens hooks the shared network
                adapter = lens_for(evaluator.model, evaluator.encoding)
                data = lens_answer(adapter, board_for(job.nodes, node_id), stored(entry.request))
        LensResult.objects.filter(pk=entry.pk).update(status=LensResult.Status.READY, data=data, error="")
        return LensResult.Status.READY
    except Exception as exc:
        log.exception("lens %s for job %s node %s failed", entry.request, job_id, node_id)
        LensResult.objects.filter(pk=entry.pk).update(status=LensResult.Status.FAILED,
                                                      error=f"{type(exc).__name__}: {exc}")
        return LensResult.Status.FAILED


def _scan(batcher, entry: LensResult) -> dict:
    """A neuron's where-else scan, holding the shared network one batch at a time and storing the
    progress the page polls."""
    from contextlib import contextmanager

    from analysis.lens import lens_for

    @contextmanager
    def hold():
        with batcher.exclusive() as evaluator:
            yield lens_for(evaluator.model, evaluator.encoding)

    def progress(done: int, total: int) -> None:
        LensResult.objects.filter(pk=entry.pk).update(done=done, total=total)

    return scan_neuron(hold, stored(entry.request), progress)


@shared_task(name="sightline.deep_search", acks_late=True)
def deep_search(deep_id: int) -> str:
    """'Analyse this position deeper': one node, a larger budget, lines published live."""
    deep = DeepSearch.objects.select_related("job__network").filter(pk=deep_id).first()
    if deep is None:
        return "missing"
    return run_deep_search(deep_id, models.get(deep.job.network), GroupPublisher(deep.job_id))


@shared_task(name="sightline.compare_lc0", acks_late=True)
def compare_lc0(job_id: str, node_id: int, entry_id: int) -> str:
    """'Compare with lc0': lc0's own search and Sightline's MCTS on one node, same net and nodes."""
    entry = Lc0Comparison.objects.filter(pk=entry_id).first()
    job = AnalysisJob.objects.select_related("network").filter(pk=job_id).first()
    if entry is None or job is None or entry.status != Lc0Comparison.Status.PENDING:
        return "missing" if entry is None or job is None else entry.status
    return run_comparison(entry, job.network, board_for(job.nodes, node_id), models.get(job.network))


_reapers: dict[str, Reaper] = {}


@signals.worker_ready.connect
def _start_reaper(sender=None, **kwargs) -> None:
    """Every ``celery worker`` looks for jobs that nobody runs any more (webapp/analyses/reaper.py).

    ``worker_ready`` comes from the command-line worker only, not from the in-process test
    workers of ``celery.contrib.testing``, whose test database is gone after their test."""
    _reapers.setdefault("reaper", Reaper().start())


@signals.worker_shutdown.connect
def _stop_reaper(sender=None, **kwargs) -> None:
    reaper = _reapers.pop("reaper", None)
    if reaper is not None:
        reaper.stop()
