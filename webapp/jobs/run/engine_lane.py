"""The engine lane: Stockfish values every position of a job beside the network, on its own thread.

The job's runner starts a lane at the start of each pass over the job's positions and goes on with
the network; the lane's thread speaks to Stockfish (``analysis.engines.reference``) and hands each
value back through a queue, and the runner stores and publishes them from its own thread (all
database work stays there) at its save points and at the end of the pass. Values are cached like
the network's results: ``PositionResult`` rows under the engine's name and budget, keyed by the FEN.

A missing, crashing or hanging engine ends the lane with a sentence (``AnalysisJob.engine_note``);
the network's analysis goes on, and the values stored before stay. Every engine call is bounded in
time, so a pass never waits on the engine for ever.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass

import chess
from django.conf import settings

from analysis.evaluator import key_digest
from analysis.engines.reference import EngineFailure, ReferenceEngine

log = logging.getLogger(__name__)
_DONE = object()


def engine_key(fen: str) -> str:
    """A position's key in the engine's cache (the engine sees the FEN; its clocks included)."""
    return key_digest(("engine", fen))


def engine_checksum(name: str) -> str:
    """``PositionResult.network_checksum`` of an engine's results."""
    return f"engine:{name}"[:64]


def engine_settings_key(nodes: int) -> str:
    return f"nodes:{nodes}"


def make_engine(nodes: int) -> ReferenceEngine:
    """The site's engine, not started yet (``ValueError`` for a budget out of range)."""
    return ReferenceEngine(settings.SIGHTLINE_ENGINE_PATH or None, nodes, slack_s=settings.SIGHTLINE_ENGINE_SLACK_S)


@dataclass(frozen=True)
class Work:
    key: str
    board: chess.Board


class EngineLane:
    """Starts ``engine`` and values ``work`` in order on a thread.

    Starting an engine takes a noticeable moment, so it happens on the thread too and the job's
    first results are not held up. The thread first reports the engine's name (``("name", name)``),
    then waits for ``proceed(skip)``: the keys the cache already holds under that name. Then come
    ``("value", key, stored JSON, ms)`` items, then ``("valued",)``; after it, the positions asked for
    with ``confirm`` are valued again at ``confirm_nodes`` (``("deep", key, stored JSON, ms)``) until
    ``no_more()``; ``failure`` is set when the engine failed.
    """

    def __init__(self, engine: ReferenceEngine, work: list[Work], game: object, confirm_nodes: int = 0):
        self.engine, self.work, self.game, self.confirm_nodes = engine, work, game, confirm_nodes
        self.failure: str | None = None
        self._out: queue.Queue = queue.Queue()
        self._confirm: queue.Queue = queue.Queue()
        self._stop, self._go, self._no_more = threading.Event(), threading.Event(), threading.Event()
        self._skip: set[str] = set()
        self._thread = threading.Thread(target=self._run, name="engine-lane", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self.engine.open()
            self._out.put(("name", self.engine.name))
            while not self._go.wait(0.25):
                if self._stop.is_set():
                    return
            for item in self.work:
                if self._stop.is_set():
                    break
                if item.key in self._skip:
                    continue
                t0 = time.perf_counter()
                value = self.engine.analyse(item.board, game=self.game)
                self._out.put(("value", item.key, value.to_json(item.board), (time.perf_counter() - t0) * 1000.0))
            if not self._stop.is_set():
                self._out.put(("valued",))
                self._confirm_asked()
        except EngineFailure as exc:
            self.failure = str(exc)
        except Exception as exc:  # a bug must not leave the runner waiting: report it as the lane's end
            log.exception("the engine lane failed")
            self.failure = f"The engine line stopped ({type(exc).__name__}: {exc}); the network's analysis goes on."
        finally:
            self.engine.close(kill=self.failure is not None)
            self._out.put(_DONE)

    def _confirm_asked(self) -> None:
        """Value the positions ``confirm`` hands over at the deeper budget, until ``no_more`` or a stop."""
        while not self._stop.is_set():
            try:
                item = self._confirm.get(timeout=0.25)
            except queue.Empty:
                if self._no_more.is_set():
                    return
                continue
            t0 = time.perf_counter()
            value = self.engine.analyse(item.board, game=self.game, nodes=self.confirm_nodes)
            self._out.put(("deep", item.key, value.to_json(item.board), (time.perf_counter() - t0) * 1000.0))

    def confirm(self, work: Work) -> None:
        """Value ``work`` again at ``confirm_nodes`` once the positions are valued (a mark to confirm)."""
        self._confirm.put(work)

    def no_more(self) -> None:
        """No more positions to confirm: the thread ends once those asked for are valued."""
        self._no_more.set()

    def proceed(self, skip: set[str]) -> None:
        """Value the work but ``skip`` (values the cache holds already)."""
        self._skip = set(skip)
        self._go.set()

    def ready(self) -> list[tuple]:
        """The items finished so far (without waiting)."""
        out = []
        while True:
            try:
                item = self._out.get_nowait()
            except queue.Empty:
                return out
            if item is _DONE:
                self._out.put(_DONE)  # keep the end visible to ``next``
                return out
            out.append(item)

    def next(self, timeout: float) -> tuple[list[tuple], bool]:
        """Wait up to ``timeout`` for the next item: (items, whether the lane has ended)."""
        try:
            item = self._out.get(timeout=timeout)
        except queue.Empty:
            return [], False
        if item is _DONE:
            self._out.put(_DONE)
            return [], True
        return [item] + self.ready(), False

    def stop(self) -> None:
        """Stop after the position in hand (bounded by the engine's timeouts)."""
        self._stop.set()

    def join(self) -> None:
        self._thread.join()
