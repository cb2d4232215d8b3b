"""The worker's side of "compare with lc0" (``webapp.lc0compare.views`` queues it).

lc0's own search (the ``lc0`` executable in a subprocess, killed past ``LC0_TIMEOUT_S``) and
Sightline's MCTS run on one position of a job with the same network and nodes; per root move their
visits, prior and Q, each search's move, the raw policy's top move and whether search overruled it.
When lc0 gives no answer (not installed, crashed, hung) the row says so and Sightline's search is
not run: the comparison is what was asked for. Nothing else of the job is touched.
"""

from __future__ import annotations

import logging
from pathlib import Path

import chess
from django.conf import settings

from analysis.errors import CheckpointError
from analysis.search.base import Budget, SearchResult
from analysis.search.lc0_compare import Lc0Comparison as Lc0Found
from analysis.search.lc0_compare import compare_with_lc0, exported_net
from analysis.search.lc0_engine import total_variation
from webapp.jobs.models import Lc0Comparison
from webapp.jobs.searching import make_search
from webapp.ondemand.run import ComputationFailed

log = logging.getLogger(__name__)

LINES = 8  # root moves shown per search
LC0_TIMEOUT_S = 60.0  # for lc0 to start, and again for its search: past it lc0 is killed
SEARCH_LIMIT_MS = 120_000  # Sightline's MCTS ends by then whatever its nodes


class Lc0Unanswered(RuntimeError):
    """lc0 gave no answer; the message says why in words ("lc0 is unavailable: ...")."""


def exported_nets() -> Path:
    """Where a network is kept in lc0's format once exported (one file per checkpoint)."""
    return Path(settings.MEDIA_ROOT) / "lc0"


def comparison_fields(entry: Lc0Comparison, network, board: chess.Board, evaluator) -> dict:
    """The answer's fields for a pending ``entry``: lc0's and Sightline's search of ``board``
    (``webapp.ondemand.run`` stores them). When one search gave no answer, ``ComputationFailed``
    says which ("lc0" or "sightline", kept in ``data["failed"]``)."""
    try:
        return {"data": comparison_json(network, board, entry.nodes, evaluator)}
    except Lc0Unanswered as exc:
        raise ComputationFailed(str(exc), failed="lc0") from None
    except Exception as exc:
        log.exception("lc0 comparison %s failed", entry.pk)
        raise ComputationFailed(f"Sightline's MCTS failed: {type(exc).__name__}: {exc}", failed="sightline") from None


def comparison_json(network, board: chess.Board, nodes: int, evaluator) -> dict:
    """Both searches of ``board`` with ``nodes``, for the side to move (Q as expected score in [0, 1])."""
    found = _lc0_search(network, board, nodes, evaluator)
    ours = make_search("mcts", evaluator).run(board, Budget(nodes=nodes, movetime_ms=SEARCH_LIMIT_MS))
    theirs_visits = {chess.Move.from_uci(line.move): line.visits for line in found.lines}
    ours_visits = {r.move: r.visits or 0 for r in ours.root}
    return {"nodes": nodes, "lc0": _lc0_json(found, board), "sightline": _sightline_json(ours, board),
            "visit_distance": round(total_variation(_share(theirs_visits), _share(ours_visits)), 4)}


def _lc0_search(network, board: chess.Board, nodes: int, evaluator) -> Lc0Found:
    cache = exported_nets()
    try:
        with evaluator.exclusive() as inner:  # written once per checkpoint, while no batch runs
            model = inner.model
            exported_net(network.path, model, cache)
    except CheckpointError as exc:
        raise Lc0Unanswered(f"lc0 cannot run this network: {exc}") from None
    found = compare_with_lc0(network.path, model, board, nodes, cache, lines=256, timeout_s=LC0_TIMEOUT_S)
    if not found.available:
        raise Lc0Unanswered(found.message)
    return found


def _share(visits: dict) -> dict:
    total = sum(visits.values())
    return {m: v / total for m, v in visits.items()} if total else {}


def _san(board: chess.Board, uci: str | None) -> str | None:
    return None if uci is None else board.san(chess.Move.from_uci(uci))


def _summary(board: chess.Board, best: str | None, policy: str | None, nodes: int, lines: list[dict]) -> dict:
    return {"best": best, "best_san": _san(board, best), "policy_move": policy, "policy_san": _san(board, policy),
            "overruled": best is not None and policy is not None and best != policy, "nodes": nodes,
            "lines": lines[:LINES]}


def _lc0_json(found: Lc0Found, board: chess.Board) -> dict:
    lines = [{"move": line.move, "san": _san(board, line.move), "visits": line.visits,
              "prior": round(line.prior, 5), "q": round((line.q + 1) / 2, 5) if line.visits else None}
             for line in found.lines]  # lc0's Q is in [-1, 1]; an unvisited move's is only its first-play value
    return _summary(board, found.best_move, found.policy_move, found.nodes, lines)


def _sightline_json(result: SearchResult, board: chess.Board) -> dict:
    lines = [{"move": r.move.uci(), "san": board.san(r.move), "visits": r.visits or 0,
              "prior": None if r.prior is None else round(float(r.prior), 5),
              "q": None if r.q is None or not r.visits else round(float(r.q), 5)} for r in result.top_root(LINES)]
    policy = max(result.root, key=lambda r: r.prior or 0.0).move.uci() if result.root else None
    best = result.best_move.uci() if result.best_move else None
    return _summary(board, best, policy, result.nodes, lines)
