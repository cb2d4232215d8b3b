"""The worker's side of the deeper engine (``webapp.jobs.engine_deeper`` queues it).

Stockfish searches one node of a job on a thread of its own (``analysis.engines.multipv``); this
thread keeps all database work: it publishes the lines as they come, looks for a Stop every
``STOP_POLL_S``, and stores and publishes the final lines with ``final: true``.
"""

from __future__ import annotations

import logging
import queue
import threading

import chess
from django.conf import settings

from analysis.engines.multipv import LinesSettings, LinesSnapshot, search_lines
from analysis.engines.reference import EngineFailure
from webapp.jobs.engine_deeper import LIMITS
from webapp.jobs.gameinput import board_for
from webapp.jobs.live.messages import EngineDeep
from webapp.jobs.models import DeepSearch

log = logging.getLogger(__name__)
STOP_POLL_S = 0.3
_END = object()


def run_engine_deeper(deep_id: int, publish) -> str:
    """Run the deeper engine search ``deep_id``; its final status."""
    deep = DeepSearch.objects.select_related("job").get(pk=deep_id)
    if not DeepSearch.objects.filter(pk=deep.pk, status=DeepSearch.Status.QUEUED).update(
            status=DeepSearch.Status.RUNNING):
        return deep.status  # stopped before it started, or a second delivery
    board = board_for(deep.job.nodes, deep.node_id)
    header = {"deep": deep.pk, "node": deep.node_id, "budget": deep.budget, "lines_asked": deep.lines,
              "max_seconds": LIMITS.max_seconds}
    white = board.turn == chess.WHITE
    request = LinesSettings(lines=deep.lines, nodes=deep.budget or None, seconds=LIMITS.max_seconds)
    final, error = _search(deep, board, request, lambda s: EngineDeep.of(header, s.to_json(board), white,
                                                                         status="running").send(publish))
    if error is not None:
        DeepSearch.objects.filter(pk=deep.pk).update(status=DeepSearch.Status.FAILED, error=error)
        EngineDeep.of(header, None, white, status="failed", error=error, final=True).send(publish)
        return DeepSearch.Status.FAILED
    result = final.to_json(board)
    DeepSearch.objects.filter(pk=deep.pk).update(status=DeepSearch.Status.DONE, result=result)
    EngineDeep.of(header, result, white, status="done", final=True).send(publish)
    return DeepSearch.Status.DONE


def _search(deep: DeepSearch, board: chess.Board, request: LinesSettings, send) -> tuple[LinesSnapshot | None, str | None]:
    """Run the engine on its thread, sending its latest lines from here; (final snapshot, error)."""
    updates: queue.Queue = queue.Queue()
    stop, out = threading.Event(), {}

    def work() -> None:
        try:
            out["final"] = search_lines(board, request, updates.put, stop.is_set, settings.SIGHTLINE_ENGINE_PATH or None)
        except EngineFailure as exc:
            out["error"] = str(exc)
        except Exception as exc:  # a bug must not leave the row running
            log.exception("deeper engine %s failed", deep.pk)
            out["error"] = f"{type(exc).__name__}: {exc}"
        finally:
            updates.put(_END)

    thread = threading.Thread(target=work, name="engine-deeper", daemon=True)
    thread.start()
    ended = False
    while not ended:
        latest = None
        try:
            item = updates.get(timeout=STOP_POLL_S)
            while True:  # only the newest snapshot goes out
                if item is _END:
                    ended = True
                    break
                latest = item
                item = updates.get_nowait()
        except queue.Empty:
            pass
        if latest is not None and not ended:
            send(latest)
        if not stop.is_set() and DeepSearch.objects.filter(pk=deep.pk, status=DeepSearch.Status.STOPPING).exists():
            stop.set()
    thread.join()
    return out.get("final"), out.get("error")
