"""The probes app's Celery tasks (found by autodiscovery; the names never change)."""

from __future__ import annotations

from celery import shared_task

from webapp.networks.model_cache import models
from webapp.networks.models import Network
from webapp.ondemand.run import run
from webapp.probes.atlas import compute_and_store, ready_row
from webapp.probes.models import ConceptAtlas, ConceptScores


@shared_task(name="sightline.compute_concept_atlas", acks_late=True)
def compute_concept_atlas(network_id: int) -> str:
    """Probe every concept at every readout point of a network and store the atlas (background lane)."""
    network = Network.objects.filter(pk=network_id).first()
    if network is None:
        return "missing"
    if ready_row(network) is not None:  # a redelivered message: the atlas is done
        return ConceptAtlas.Status.READY
    try:
        return compute_and_store(network, evaluator=models.get(network)).status
    except Exception:
        return "failed"


@shared_task(name="sightline.compute_concept_scores", acks_late=True)
def compute_concept_scores(network_id: str, _node: int, entry_id: int) -> str:
    """One position's concept scores from the network's stored atlas (on-demand lane)."""
    import chess

    from analysis.lens import lens_for
    from webapp.ondemand.run import ComputationFailed
    from webapp.probes.concepts import position_scores

    network = Network.objects.filter(pk=int(network_id)).first()
    if network is None:
        return "missing"

    def answer(entry: ConceptScores) -> dict:
        row = ready_row(network)
        if row is None or row.data.get("stamp") != entry.stamp:
            raise ComputationFailed(f"the concept atlas of {network.name} changed: ask again")
        with models.get(network).exclusive() as evaluator:
            adapter = lens_for(evaluator.model, evaluator.encoding)
            return {"data": position_scores(adapter, row.data, chess.Board(entry.fen))}

    return run(ConceptScores, entry_id, answer)
