"""The worker's side of "compare with lc0" (``webapp.lc0compare.views`` queues it).

The comparison itself is the library's (``analysis.engines.lc0_versus_mcts``): lc0's own search (the
``lc0`` executable in a subprocess, killed past ``LC0_TIMEOUT_S``) and Sightline's MCTS on one position
of a job with the same network and nodes. Here: where the network's lc0 file is kept, the limits, and
the row's fields (``webapp.ondemand.run`` stores them). When lc0 gives no answer (not installed,
crashed, hung) the row says so and Sightline's search is not run. Nothing else of the job is touched.
"""

from __future__ import annotations

import logging
from pathlib import Path

import chess
from django.conf import settings

from analysis.engines.lc0_versus_mcts import ComparisonLimits, Lc0Unanswered, compare_searches
from analysis.models.lc0.convert.export import exported_net
from webapp.jobs.models import Lc0Comparison
from webapp.ondemand.run import ComputationFailed

log = logging.getLogger(__name__)

LC0_TIMEOUT_S = 60.0  # for lc0 to start, and again for its search: past it lc0 is killed
SEARCH_LIMIT_MS = 120_000  # Sightline's MCTS ends by then whatever its nodes


def exported_nets() -> Path:
    """Where a network is kept in lc0's format once exported (one file per checkpoint)."""
    return Path(settings.MEDIA_ROOT) / "lc0"


def comparison_fields(entry: Lc0Comparison, network, board: chess.Board, evaluator) -> dict:
    """The answer's fields for a pending ``entry``: lc0's and Sightline's search of ``board``.
    When one search gave no answer, ``ComputationFailed`` says which ("lc0" or "sightline", kept in
    ``data["failed"]``)."""
    try:
        return {"data": comparison_json(network, board, entry.nodes, evaluator)}
    except Lc0Unanswered as exc:
        raise ComputationFailed(str(exc), failed="lc0") from None
    except Exception as exc:
        log.exception("lc0 comparison %s failed", entry.pk)
        raise ComputationFailed(f"Sightline's MCTS failed: {type(exc).__name__}: {exc}", failed="sightline") from None


def comparison_json(network, board: chess.Board, nodes: int, evaluator) -> dict:
    """Both searches of ``board`` with ``nodes``, for the side to move (Q as expected score in [0, 1])."""
    def export_net() -> Path:
        with evaluator.exclusive() as inner:  # written once per checkpoint, while no batch runs
            return exported_net(network.path, inner.model, exported_nets())

    limits = ComparisonLimits(lc0_timeout_s=LC0_TIMEOUT_S, search_limit_ms=SEARCH_LIMIT_MS)
    return compare_searches(export_net, board, nodes, evaluator, limits)
