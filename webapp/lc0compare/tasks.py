"""The lc0 comparison's Celery task (found by autodiscovery; the name never changes)."""

from __future__ import annotations

from celery import shared_task

from webapp.jobs.gameinput import board_for
from webapp.jobs.models import AnalysisJob, Lc0Comparison
from webapp.lc0compare.runner import comparison_fields
from webapp.networks.model_cache import models
from webapp.ondemand.run import run


@shared_task(name="sightline.compare_lc0", acks_late=True)
def compare_lc0(job_id: str, node_id: int, entry_id: int) -> str:
    """'Compare with lc0': lc0's own search and Sightline's MCTS on one node, same net and nodes."""
    job = AnalysisJob.objects.select_related("network").filter(pk=job_id).first()
    if job is None:
        return "missing"
    return run(Lc0Comparison, entry_id, lambda entry: comparison_fields(
        entry, job.network, board_for(job.nodes, node_id), models.get(job.network)))
