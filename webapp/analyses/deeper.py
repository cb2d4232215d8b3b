""""Analyse this position deeper": the job's search on one of its positions with a larger budget
(or until stopped), its lines published live as Nibbler shows them (MultiPV: visits, prior, Q
and WDL per move, with each move's line).

The page asks (``start``), a worker runs it (``run``, from ``workers.tasks.deep_search``) and
publishes ``deep`` messages to the job's group a few times a second, then the final lines; the
page's Stop button marks the row ``stopping`` (``stop``), which the running search sees.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta

import chess
from django.db import transaction
from django.utils import timezone

from webapp.analyses.gameinput import board_for
from webapp.analyses.models import AnalysisJob, DeepSearch
from webapp.analyses.results import san_line
from webapp.analyses.searches import SEARCHES

log = logging.getLogger(__name__)

# "Until stopped" still ends: a forgotten tab must not hold a worker for ever.
MAX_SECONDS = 600
LINES = 8  # MultiPV lines shown and sent
PV_MOVES = 10
PUBLISH_EVERY_S = 0.4
STOP_POLL_S = 0.5
ACTIVE = (DeepSearch.Status.QUEUED, DeepSearch.Status.RUNNING, DeepSearch.Status.STOPPING)


class DeeperRefused(ValueError):
    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def default_budget(search: str, job_budget: int) -> int:
    """Ten times the job's nodes, or two plies deeper, within the search's range."""
    spec = SEARCHES[search]
    larger = job_budget + 2 if spec.budget_unit == "depth" else job_budget * 10
    return min(spec.budget_max, max(spec.budget_min, larger))


def start(job: AnalysisJob, node_id, budget) -> DeepSearch:
    """Check the request and queue the search: ``budget`` a number in the search's range, or
    "until-stopped" (nodes searches only; alpha-beta's depth always ends)."""
    spec = SEARCHES.get(job.search)
    if spec is None or spec.fixed:
        raise DeeperRefused(f"The {job.search} search has no budget to raise; start an analysis with MCTS, "
                            f"Gumbel, probability or alpha-beta search to look deeper.")
    if isinstance(node_id, bool) or not isinstance(node_id, int) or not 0 <= node_id < len(job.nodes):
        raise DeeperRefused(f"This analysis has no position {node_id!r}.", status=404)
    if job.nodes[node_id].get("outcome"):
        raise DeeperRefused("The game is over in this position: there is nothing to search.")
    if budget == "until-stopped":
        if spec.budget_unit != "nodes":
            raise DeeperRefused(f"{job.search} searches to a depth; choose one up to {spec.budget_max}.")
        budget = 0
    elif isinstance(budget, bool) or not isinstance(budget, int) or not spec.budget_min <= budget <= spec.budget_max:
        raise DeeperRefused(f'budget must be "until-stopped" or a whole number of {spec.budget_unit} from '
                            f"{spec.budget_min} to {spec.budget_max}.")
    # A row active for longer than any search may run lost its worker (killed, or never reached).
    live = DeepSearch.objects.filter(job=job, status__in=ACTIVE,
                                     created_at__gt=timezone.now() - timedelta(seconds=MAX_SECONDS + 60))
    with transaction.atomic():
        if live.exists():
            raise DeeperRefused("A deeper search of this analysis is already running: stop it first.", status=409)
        deep = DeepSearch.objects.create(job=job, node_id=node_id, budget=budget)
    from workers.tasks import deep_search

    try:
        deep_search.apply_async(args=[deep.pk], queue=job.network.queue)
    except Exception as exc:  # the broker is down: say so now rather than leave it queued
        log.warning("could not queue deeper search %s: %s", deep.pk, exc)
        DeepSearch.objects.filter(pk=deep.pk).update(status=DeepSearch.Status.FAILED, error=str(exc))
        raise DeeperRefused("The workers cannot be reached right now; try again in a minute.", status=503) from None
    return deep


def stop(deep: DeepSearch) -> bool:
    """Ask the running search to stop (it keeps its lines); False when it had ended."""
    return bool(DeepSearch.objects.filter(pk=deep.pk, status__in=ACTIVE).update(status=DeepSearch.Status.STOPPING))


def lines_json(snapshot, board: chess.Board, white_to_move: bool) -> dict:
    """A search snapshot as the page shows it: totals and the top root moves, White's view."""
    def white(score):
        return None if score is None else round(score if white_to_move else 1.0 - score, 5)

    lines = []
    for r in snapshot.top_root(LINES):
        wdl = None if r.wdl is None else [round(x, 4) for x in (r.wdl if white_to_move else r.wdl[::-1])]
        lines.append({"move": r.move.uci(), "san": board.san(r.move), "visits": r.visits,
                      "prior": None if r.prior is None else round(r.prior, 5), "q": white(r.q),
                      "score": white(r.score), "wdl": wdl, "pv_san": san_line(board, (r.pv or [r.move])[:PV_MOVES])})
    return {"nodes": snapshot.nodes, "nps": snapshot.nps, "elapsed_s": round(snapshot.elapsed_s, 2),
            "depth": snapshot.depth, "best": snapshot.best_move.uci() if snapshot.best_move else None,
            "score": white(snapshot.score), "lines": lines}


def run(deep_id: int, evaluator, publish) -> str:
    """The worker's side: search, publishing lines as they change, until the budget, a stop or
    ``MAX_SECONDS``; the final lines are stored and published with ``final: true``."""
    from analysis.search.base import Budget
    from workers.searching import make_search

    deep = DeepSearch.objects.select_related("job__network").get(pk=deep_id)
    if not DeepSearch.objects.filter(pk=deep.pk, status=DeepSearch.Status.QUEUED).update(
            status=DeepSearch.Status.RUNNING):
        return deep.status  # stopped before it started, or a second delivery
    job = deep.job
    board = board_for(job.nodes, deep.node_id)
    white_to_move = board.turn == chess.WHITE
    spec = SEARCHES[job.search]
    budget = Budget(movetime_ms=MAX_SECONDS * 1000) if deep.budget == 0 else \
        Budget(movetime_ms=MAX_SECONDS * 1000, **spec.budget_kwargs(deep.budget))
    search = make_search(job.search, evaluator)
    clock = {"sent": 0.0, "polled": time.monotonic()}
    header = {"deep": deep.pk, "node": deep.node_id, "budget": deep.budget}

    def progress(snapshot) -> None:
        now = time.monotonic()
        if now - clock["polled"] >= STOP_POLL_S:
            clock["polled"] = now
            if DeepSearch.objects.filter(pk=deep.pk, status=DeepSearch.Status.STOPPING).exists():
                search.stop(timeout=0)
        if snapshot.final or now - clock["sent"] < PUBLISH_EVERY_S:
            return
        clock["sent"] = now
        publish("deep", {**header, "status": "running", **lines_json(snapshot, board, white_to_move)})

    try:
        result = search.run(board, budget, progress=progress)
    except Exception as exc:
        log.exception("deeper search %s failed", deep.pk)
        DeepSearch.objects.filter(pk=deep.pk).update(status=DeepSearch.Status.FAILED, error=f"{type(exc).__name__}: {exc}")
        publish("deep", {**header, "status": "failed", "error": f"{type(exc).__name__}: {exc}", "final": True})
        return DeepSearch.Status.FAILED
    final = lines_json(result, board, white_to_move)
    DeepSearch.objects.filter(pk=deep.pk).update(status=DeepSearch.Status.DONE, result=final)
    publish("deep", {**header, "status": "done", "stopped": result.stopped, "final": True, **final})
    return DeepSearch.Status.DONE
