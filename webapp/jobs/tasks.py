"""The jobs app's Celery tasks, found by the worker through autodiscovery.

The site sends them by name (``workers.dispatch.send_task``); the names never change, so
messages already queued still reach them. A job goes to its network's queue (``gpu`` or ``cpu``).
"""

from __future__ import annotations

import logging

from celery import shared_task, signals

from webapp.jobs.run.deep_runner import run_deep_search
from webapp.jobs.run.engine_deeper_runner import run_engine_deeper
from webapp.jobs.models import AnalysisJob, DeepSearch
from webapp.jobs.live.publish import GroupPublisher
from webapp.jobs.run.reaper import Reaper
from webapp.jobs.run.runner import JobRun
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


@shared_task(name="sightline.deep_search", acks_late=True)
def deep_search(deep_id: int) -> str:
    """'Analyse this position deeper': one node, a larger budget, lines published live."""
    deep = DeepSearch.objects.select_related("job__network").filter(pk=deep_id).first()
    if deep is None:
        return "missing"
    return run_deep_search(deep_id, models.get(deep.job.network), GroupPublisher(deep.job_id))


@shared_task(name="sightline.engine_deeper", acks_late=True)
def engine_deeper(deep_id: int) -> str:
    """'Go deeper' with Stockfish: one node, several lines, published live."""
    deep = DeepSearch.objects.filter(pk=deep_id).first()
    if deep is None:
        return "missing"
    return run_engine_deeper(deep_id, GroupPublisher(deep.job_id))


_reapers: dict[str, Reaper] = {}


@signals.worker_ready.connect
def _start_reaper(sender=None, **kwargs) -> None:
    """Every ``celery worker`` looks for jobs that nobody runs any more (webapp/jobs/run/reaper.py).

    ``worker_ready`` comes from the command-line worker only, not from the in-process test
    workers of ``celery.contrib.testing``, whose test database is gone after their test."""
    _reapers.setdefault("reaper", Reaper().start())


@signals.worker_shutdown.connect
def _stop_reaper(sender=None, **kwargs) -> None:
    reaper = _reapers.pop("reaper", None)
    if reaper is not None:
        reaper.stop()
