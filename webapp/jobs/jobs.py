"""Creating, dispatching and cancelling analysis jobs."""

from __future__ import annotations

import logging
import uuid

from django.db import transaction
from django.http import Http404
from django.utils import timezone

from webapp.jobs.gameinput import GameTree
from webapp.jobs.keys import with_keys
from webapp.jobs.models import AnalysisJob
from webapp.networks.models import Network
from workers import dispatch
from workers.dispatch import BrokerUnavailable

log = logging.getLogger(__name__)


def get_job_or_404(job_id: str) -> AnalysisJob:
    """The job with this id (a UUID), or Http404 saying that none has it."""
    try:
        key = uuid.UUID(str(job_id))
    except ValueError:
        raise Http404(f"No analysis has the id {job_id!r}.") from None
    job = AnalysisJob.objects.select_related("network").filter(pk=key).first()
    if job is None:
        raise Http404(f"No analysis has the id {job_id!r}.")
    return job


def create_job(tree: GameTree, network: Network, search: str, budget: int, *, dispatch: bool = True,
               engine_nodes: int = 0) -> AnalysisJob:
    """Save a queued job and send it to the network's queue once the transaction commits.

    ``engine_nodes``: Stockfish's nodes per position in the engine lane beside the network (0: none;
    the form, the API and analyze_pgn ask for the site's default unless told otherwise).

    If the broker cannot take it, the row is deleted again and ``BrokerUnavailable`` raised
    (the view answers 503): no job is left queued with no task behind it."""
    with transaction.atomic():
        job = AnalysisJob.objects.create(
            network=network, search=search, budget=budget, engine_nodes=engine_nodes, headers=tree.headers, start_fen=tree.start_fen,
            pgn=tree.pgn, nodes=with_keys(tree.as_dicts(), network), total_positions=len(tree.nodes), task_id="",
        )
        if dispatch:
            transaction.on_commit(lambda: _dispatch_or_withdraw(job), robust=False)
    return job


def copy_job(job: AnalysisJob) -> AnalysisJob:
    """A queued copy of ``job`` (its game tree with any added lines, network, search and budgets),
    sent like a new job: its positions' results are cached, so it finishes at once. The caller makes
    the visitor its owner; the original is not touched. ``BrokerUnavailable`` as ``create_job``."""
    with transaction.atomic():
        copy = AnalysisJob.objects.create(
            network=job.network, search=job.search, budget=job.budget, engine_nodes=job.engine_nodes,
            headers=job.headers, start_fen=job.start_fen, pgn=job.pgn, nodes=job.nodes,
            total_positions=len(job.nodes), task_id="")
        transaction.on_commit(lambda: _dispatch_or_withdraw(copy), robust=False)
    return copy


def _dispatch_or_withdraw(job: AnalysisJob) -> None:
    try:
        dispatch_job(job)
    except BrokerUnavailable:
        log.warning("the broker refused job %s; withdrawing it", job.id)
        AnalysisJob.objects.filter(pk=job.pk, task_id="").delete()
        raise


def dispatch_job(job: AnalysisJob) -> None:
    # The task id is the job id: one task per job, easy to find in Flower or the logs.
    dispatch.send_task("sightline.run_analysis", [str(job.id)], queue=job.network.queue, task_id=str(job.id))
    AnalysisJob.objects.filter(pk=job.pk, task_id="").update(task_id=str(job.id))


def cancel_job(job: AnalysisJob) -> bool:
    """Mark a job cancelled; the worker sees it between batches and stops. False when already finished."""
    updated = AnalysisJob.objects.filter(pk=job.pk, status__in=[AnalysisJob.Status.QUEUED, AnalysisJob.Status.RUNNING]) \
        .update(status=AnalysisJob.Status.CANCELLED, finished_at=timezone.now())
    return bool(updated)
