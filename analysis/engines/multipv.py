"""Stockfish on one position with several principal variations, reported as it searches: the local
engine of lichess's analysis board, run where the engine is installed (a worker), not in a browser.

``search_lines`` hands ``on_update`` a ``LinesSnapshot`` a few times a second (depth, nodes, nodes/s
and the best ``lines`` moves each with its line), stops when ``should_stop()`` says so (it is asked
from a watching thread: an Event's ``is_set``), at the node budget or at the time limit, whichever
comes first, and returns the last snapshot. Values are for
the side to move, as the engine lane's (``analysis.engines.reference``).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace
from typing import Callable

import chess
import chess.engine

from analysis.engines.reference import EngineFailure, EngineValue, _describe
from analysis.engines.stockfish import find_stockfish

MAX_LINES = 5
PV_MOVES = 16
STOP_POLL_S = 0.2


@dataclass(frozen=True)
class LinesSettings:
    """One request: ``lines`` principal variations (1-5), at most ``nodes`` (None: no node limit) and
    at most ``seconds``; ``every_s`` between reports; the engine's threads and hash."""

    lines: int = 3
    nodes: int | None = None
    seconds: float = 30.0
    every_s: float = 0.4
    threads: int = 1
    hash_mb: int = 64


@dataclass(frozen=True)
class LinesSnapshot:
    """The search so far: its totals and its lines, best first (``EngineValue`` each, the side to move's)."""

    engine: str
    depth: int = 0
    seldepth: int = 0
    nodes: int = 0
    nps: int = 0
    elapsed_s: float = 0.0
    lines: list[EngineValue] = field(default_factory=list)
    stopped: bool = False  # ended by ``should_stop`` rather than by its limits

    def to_json(self, board: chess.Board) -> dict:
        """As stored and sent (the side to move's values; ``messages.EngineDeep`` turns them to White's)."""
        return {"engine": self.engine, "depth": self.depth, "seldepth": self.seldepth, "nodes": self.nodes,
                "nps": self.nps, "elapsed_s": round(self.elapsed_s, 2), "stopped": self.stopped,
                "lines": [{"rank": rank, **line.to_json(board)} for rank, line in enumerate(self.lines, 1)]}


def search_lines(board: chess.Board, settings: LinesSettings, on_update: Callable[[LinesSnapshot], None],
                 should_stop: Callable[[], bool] = lambda: False, path: str | None = None) -> LinesSnapshot:
    """Search ``board`` as ``settings`` say; ``EngineFailure`` with a sentence when the engine fails."""
    if not 1 <= settings.lines <= MAX_LINES:
        raise ValueError(f"lines must be from 1 to {MAX_LINES}, not {settings.lines}")
    found = find_stockfish(path)
    if found is None:
        raise EngineFailure("Stockfish is not installed here (apt-get install stockfish), so there is no deeper engine.")
    try:
        engine = chess.engine.SimpleEngine.popen_uci(found, timeout=10)
    except Exception as exc:
        raise EngineFailure(f"Stockfish could not be started ({found}: {_describe(exc)}).") from None
    try:
        engine.configure({k: v for k, v in {"Threads": settings.threads, "Hash": settings.hash_mb}.items()
                          if k in engine.options})
        return _run(engine, board, settings, on_update, should_stop)
    except chess.engine.EngineError as exc:
        raise EngineFailure(f"Stockfish failed ({_describe(exc)}).") from None
    finally:
        engine.close()


def _run(engine, board, settings, on_update, should_stop) -> LinesSnapshot:
    limit = chess.engine.Limit(nodes=settings.nodes, time=settings.seconds)
    snapshot = LinesSnapshot(engine=engine.id.get("name", "Stockfish"))
    lines: dict[int, EngineValue] = {}
    ended, asked = threading.Event(), threading.Event()
    with engine.analysis(board, limit, multipv=min(settings.lines, max(1, board.legal_moves.count()))) as analysis:
        watcher = threading.Thread(target=_watch, args=(analysis, should_stop, ended, asked), daemon=True)
        watcher.start()
        t0, sent = time.monotonic(), 0.0
        try:
            for info in analysis:
                snapshot = _merged(snapshot, lines, info, board, time.monotonic() - t0)
                if time.monotonic() - sent >= settings.every_s and snapshot.lines:
                    sent = time.monotonic()
                    on_update(snapshot)
        finally:
            ended.set()
            watcher.join()
    return replace(snapshot, elapsed_s=time.monotonic() - t0, stopped=asked.is_set())


def _merged(snapshot: LinesSnapshot, lines: dict[int, EngineValue], info: dict, board: chess.Board,
            elapsed: float) -> LinesSnapshot:
    """The snapshot with one ``info`` line of the engine's taken in."""
    if "score" in info and info.get("pv"):
        rank = int(info.get("multipv", 1))
        score = info["score"].pov(board.turn)
        pv = [m.uci() for m in info["pv"][:PV_MOVES]]
        lines[rank] = EngineValue(cp=score.score(), mate=score.mate(), best=pv[0], pv=pv,
                                  depth=int(info.get("depth", 0)), nodes=int(info.get("nodes", 0)))
    nodes = int(info.get("nodes", snapshot.nodes))
    return replace(snapshot, depth=max(snapshot.depth, int(info.get("depth", 0))),
                   seldepth=max(snapshot.seldepth, int(info.get("seldepth", 0))), nodes=nodes,
                   nps=int(info.get("nps", snapshot.nps)), elapsed_s=elapsed,
                   lines=[lines[r] for r in sorted(lines)])


def _watch(analysis, should_stop: Callable[[], bool], ended: threading.Event, asked: threading.Event) -> None:
    """Stop the engine once ``should_stop()`` says so (asked every ``STOP_POLL_S``, on this thread:
    keep it cheap) or the search ends by itself."""
    while not ended.wait(STOP_POLL_S):
        if should_stop():
            asked.set()
            analysis.stop()
            return
