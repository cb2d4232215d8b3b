"""The lens app's Celery tasks (found by autodiscovery; the names never change)."""

from __future__ import annotations

from contextlib import contextmanager

from celery import shared_task

from analysis.lens import lens_for
from analysis.lens.answers import answer as lens_answer
from analysis.lens.answers import scan as scan_neuron
from analysis.lens.requests import stored
from webapp.jobs.attention_maps import encode_maps
from webapp.jobs.gameinput import board_for
from webapp.jobs.keys import node_key
from webapp.jobs.models import AnalysisJob, AttentionMap, LensResult
from webapp.networks.model_cache import models
from webapp.ondemand.run import run


@shared_task(name="sightline.compute_attention", acks_late=True)
def compute_attention(job_id: str, node_id: int, entry_id: int | None = None) -> str:
    """Attention of every layer and head for one node of a job, stored compactly. (Messages queued
    before the entry's id was sent carry only the job and node: the row is found by its key.)"""
    job = AnalysisJob.objects.select_related("network").filter(pk=job_id).first()
    if job is None:
        return "missing"
    if entry_id is None:
        entry = AttentionMap.objects.filter(position_key=node_key(job, node_id),
                                            network_checksum=job.network.checksum).first()
        if entry is None:
            return "missing"
        entry_id = entry.pk

    def maps(entry: AttentionMap) -> dict:
        found = models.get(job.network).evaluate([board_for(job.nodes, node_id)], attention=True)[0].attention
        if found is None:
            raise ValueError(f"{job.network.name} returned no attention maps")
        return {"layers": found.shape[0], "heads": found.shape[1], "data": encode_maps(found)}

    return run(AttentionMap, entry_id, maps)


@shared_task(name="sightline.compute_lens", acks_late=True)
def compute_lens(job_id: str, node_id: int, entry_id: int) -> str:
    """One lens quantity (``LensResult.request``) for one node of a job, on the worker's device."""
    job = AnalysisJob.objects.select_related("network").filter(pk=job_id).first()
    if job is None:
        return "missing"

    def answer(entry: LensResult) -> dict:
        if entry.request["quantity"] == "where_else":
            return {"data": _scan(models.get(job.network), entry)}
        with models.get(job.network).exclusive() as evaluator:  # the lens hooks the shared network
            adapter = lens_for(evaluator.model, evaluator.encoding)
            return {"data": lens_answer(adapter, board_for(job.nodes, node_id), stored(entry.request))}

    return run(LensResult, entry_id, answer)


def _scan(batcher, entry: LensResult) -> dict:
    """A neuron's where-else scan, holding the shared network one batch at a time and storing the
    progress the page polls."""

    @contextmanager
    def hold():
        with batcher.exclusive() as evaluator:
            yield lens_for(evaluator.model, evaluator.encoding)

    def progress(done: int, total: int) -> None:
        LensResult.objects.filter(pk=entry.pk).update(done=done, total=total)

    return scan_neuron(hold, stored(entry.request), progress)
