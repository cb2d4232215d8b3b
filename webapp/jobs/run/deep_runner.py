"""The worker's side of "analyse this position deeper" (``webapp.jobs.deeper`` queues it).

Search one node of a job, publishing its lines as they change, until the budget, a stop or
``deeper.MAX_SECONDS``; the final lines are stored and published with ``final: true``.
"""

from __future__ import annotations

import logging
import time

import chess

from analysis.search.base import Budget
from webapp.jobs import deeper
from webapp.jobs.gameinput import board_for
from webapp.jobs.live.messages import Deep
from webapp.jobs.models import DeepSearch
from webapp.jobs.results import san_line
from webapp.jobs.searches import SEARCHES
from webapp.jobs.searching import make_search

log = logging.getLogger(__name__)

LINES = 8  # MultiPV lines shown and sent
PV_MOVES = 10
PUBLISH_EVERY_S = 0.4
STOP_POLL_S = 0.5


def lines_json(snapshot, board: chess.Board) -> dict:
    """A search snapshot's totals and top root moves, for the side to move as stored
    (``messages.Deep`` sends them as White's, rounded)."""
    lines = []
    for r in snapshot.top_root(LINES):
        lines.append({"move": r.move.uci(), "san": board.san(r.move), "visits": r.visits,
                      "prior": None if r.prior is None else round(r.prior, 5), "q": _number(r.q),
                      "score": _number(r.score), "wdl": None if r.wdl is None else [float(x) for x in r.wdl],
                      "pv_san": san_line(board, (r.pv or [r.move])[:PV_MOVES])})
    return {"nodes": snapshot.nodes, "nps": snapshot.nps, "elapsed_s": round(snapshot.elapsed_s, 2),
            "depth": snapshot.depth, "best": snapshot.best_move.uci() if snapshot.best_move else None,
            "score": _number(snapshot.score), "lines": lines}


def _number(x) -> float | None:
    return None if x is None else float(x)


def run_deep_search(deep_id: int, evaluator, publish) -> str:
    """Run the deeper search ``deep_id`` with ``evaluator``; its final status."""
    deep = DeepSearch.objects.select_related("job__network").get(pk=deep_id)
    if not DeepSearch.objects.filter(pk=deep.pk, status=DeepSearch.Status.QUEUED).update(
            status=DeepSearch.Status.RUNNING):
        return deep.status  # stopped before it started, or a second delivery
    job = deep.job
    board = board_for(job.nodes, deep.node_id)
    white_to_move = board.turn == chess.WHITE
    search = make_search(job.search, evaluator)
    header = {"deep": deep.pk, "node": deep.node_id, "budget": deep.budget}
    progress = _live_lines(deep, search, board,
                           lambda lines: Deep.of(header, lines, white_to_move, status="running").send(publish))
    try:
        result = search.run(board, _budget(job.search, deep.budget), progress=progress)
    except Exception as exc:
        log.exception("deeper search %s failed", deep.pk)
        DeepSearch.objects.filter(pk=deep.pk).update(status=DeepSearch.Status.FAILED,
                                                     error=f"{type(exc).__name__}: {exc}")
        Deep.of(header, None, white_to_move, status="failed", error=f"{type(exc).__name__}: {exc}",
                final=True).send(publish)
        return DeepSearch.Status.FAILED
    final = lines_json(result, board)
    DeepSearch.objects.filter(pk=deep.pk).update(status=DeepSearch.Status.DONE, result=final)
    Deep.of(header, final, white_to_move, status="done", stopped=result.stopped, final=True).send(publish)
    return DeepSearch.Status.DONE


def _budget(search: str, budget: int) -> Budget:
    """The row's budget (0: until stopped), always bounded by ``deeper.MAX_SECONDS``."""
    limit = Budget(movetime_ms=deeper.MAX_SECONDS * 1000)
    return limit if budget == 0 else Budget(movetime_ms=limit.movetime_ms, **SEARCHES[search].budget_kwargs(budget))


def _live_lines(deep: DeepSearch, search, board: chess.Board, send):
    """The search's progress callback: stops the search once the row says ``stopping``, and
    sends its lines at most every ``PUBLISH_EVERY_S``."""
    clock = {"sent": 0.0, "polled": time.monotonic()}

    def progress(snapshot) -> None:
        now = time.monotonic()
        if now - clock["polled"] >= STOP_POLL_S:
            clock["polled"] = now
            if DeepSearch.objects.filter(pk=deep.pk, status=DeepSearch.Status.STOPPING).exists():
                search.stop(timeout=0)
        if snapshot.final or now - clock["sent"] < PUBLISH_EVERY_S:
            return
        clock["sent"] = now
        send(lines_json(snapshot, board))

    return progress
