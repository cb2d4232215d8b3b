"""The runner's side of the engine lane for one pass over a job: what the engine has valued, storing
it, its move judgements, and the messages about it. Runs on the runner's thread only (the lane's
thread only talks to Stockfish: ``webapp.jobs.run.engine_lane``).

An engine judgement (lichess's mark, ``analysis.game_review.mark``) needs the engine's value of the
position before the move and after it; it is made, never stored, wherever both are known, so it
agrees with the engine's values by construction. A "?" or "??" is shown only once the engine has
valued both positions again at a higher budget (``mark_confirmation``).
"""

from __future__ import annotations

import logging
from typing import Callable

import chess

from analysis.game_review import Eval, mark
from webapp.jobs.run.engine_lane import EngineLane, Work, engine_checksum, engine_key, engine_settings_key, make_engine
from webapp.jobs.run.mark_confirmation import CONFIRMATION, confirmed, needs_confirmation, pending
from webapp.jobs.models import AnalysisJob, PositionResult

log = logging.getLogger(__name__)
# How often a pass waiting for the engine's last values looks for a cancel (seconds).
WAIT_POLL = 0.5


def engine_judgement(played_uci: str, before: dict, after: dict) -> dict:
    """The engine's judgement of a move (stored form: the mover's scores), from the engine's values
    of the position before it (``before``) and after it (``after``), each for its side to move.
    The mark is lichess's (its rules ceil a value at 1000 cp, a mate included); the scores shown with
    it are the values' own ``score``, the figures the panel and the graph show (a mate 100%, +15
    99.2%: the ceiled 97.5% beside them read as another figure for the same position)."""
    value_before, value_after = Eval(before["cp"], before["mate"]), Eval(after["cp"], after["mate"])
    verdict = mark(value_before, value_after, played_is_best=played_uci == before.get("best"))
    win_before, win_after = before["score"], 1.0 - after["score"]
    return {"played": played_uci, "best": before.get("best"), "best_san": before.get("best_san"),
            "best_score": round(win_before, 5), "played_score": round(win_after, 5), "bound": "exact",
            "drop": round(max(0.0, win_before - win_after), 5), "source": "engine",
            "glyph": verdict.glyph if verdict else None, "name": verdict.name if verdict else None,
            "reason": verdict.reason if verdict else ""}


def checked_judgement(played_uci: str, before: dict, after: dict, deep_before: dict | None,
                      deep_after: dict | None, confirm_nodes: int) -> dict:
    """The engine's judgement as shown: a "?" or "??" from the lane's values stands only as the
    deeper values (``confirm_nodes``) confirm it; without them it is pending (no mark)."""
    shallow = engine_judgement(played_uci, before, after)
    if not needs_confirmation(shallow):
        return shallow
    if deep_before is None or deep_after is None:
        return pending(shallow, confirm_nodes)
    return confirmed(shallow, engine_judgement(played_uci, deep_before, deep_after), confirm_nodes)


def engine_judgements(nodes: list[dict], values: dict[int, dict], deep: dict[int, dict] | None = None,
                      confirm_nodes: int = 0) -> dict[int, dict]:
    """{node id: the engine's judgement of the move that led there} wherever both values are known;
    ``deep``: the values at ``confirm_nodes`` that confirm a "?" or "??"."""
    deep = deep or {}
    out = {}
    for node in nodes:
        parent = node["parent"]
        if parent is not None and parent in values and node["id"] in values:
            out[node["id"]] = checked_judgement(node["uci"], values[parent], values[node["id"]], deep.get(parent),
                                                deep.get(node["id"]), confirm_nodes)
    return out


def confirm_nodes(job: AnalysisJob) -> int:
    """The budget that confirms the job's engine marks."""
    return CONFIRMATION.nodes(job.engine_nodes)


def stored_engine_values(job: AnalysisJob, keys: list[str] | None = None, nodes: int | None = None) -> dict[str, dict]:
    """{engine key: stored value} of the job's positions (or of ``keys``), from the engine the job used,
    at its budget (or at ``nodes``: the confirmations')."""
    if not job.engine_nodes or not job.engine_name:
        return {}
    keys = keys if keys is not None else [engine_key(node["fen"]) for node in job.nodes]
    return dict(PositionResult.objects.filter(
        network_checksum=engine_checksum(job.engine_name), settings_key=engine_settings_key(nodes or job.engine_nodes),
        position_key__in=set(keys)).values_list("position_key", "data"))


class EnginePass:
    """Start the lane (``start``, once), take its values as they come (``collect``), wait for the rest (``finish``).

    ``store(rows)`` saves result rows (the runner's ``store_results``); ``announce(items)`` publishes
    [(node, engine value or None, engine judgement or None)] (stored form); ``status()`` publishes the
    job's status (its engine note changed); ``on_value(node_id, value, judgement)`` is the analyze_pgn
    command's hook.
    """

    def __init__(self, job: AnalysisJob, store: Callable[[list[PositionResult]], None],
                 announce: Callable[[list[tuple[dict, dict | None, dict | None]]], None], status: Callable[[], None],
                 on_value: Callable[[int, dict | None, dict | None], None] | None = None):
        self.job, self.store, self.announce, self.status, self.on_value = job, store, announce, status, on_value
        self.keys = [engine_key(node["fen"]) for node in job.nodes]
        self.values: dict[str, dict] = {}
        self.deep: dict[str, dict] = {}  # values at the confirmations' budget
        self.asked: set[str] = set()  # keys handed to the lane to confirm
        self.boards: list[chess.Board] = []
        self.confirm_nodes = confirm_nodes(job) if job.engine_nodes else 0
        self.lane: EngineLane | None = None
        self.started = False

    @property
    def on(self) -> bool:
        return bool(self.job.engine_nodes)

    def start(self, boards: list[chess.Board]) -> None:
        """Start the engine on the job's positions (it starts on its own thread; see ``EngineLane``);
        once per pass: later calls do nothing."""
        if not self.on or self.started:
            return
        self.started = True
        try:
            engine = make_engine(self.job.engine_nodes)
        except ValueError as exc:
            self._note(f"No engine line: {exc}.")
            return
        first_node = {}
        for node_id, key in enumerate(self.keys):  # main line first: node order
            first_node.setdefault(key, node_id)
        self.boards = boards
        self.lane = EngineLane(engine, [Work(key, boards[node_id]) for key, node_id in first_node.items()],
                               game=self.job.pk, confirm_nodes=self.confirm_nodes)

    def collect(self) -> None:
        if self.lane is not None:
            self._handle(self.lane.ready())

    def _handle(self, items: list[tuple]) -> None:
        """The lane's news: its engine's name (then the cached values, which it skips), values, the end
        of its values (every confirmation is asked for by then), or confirmations' values."""
        values, deep, valued = [], [], False
        for item in items:
            if item[0] == "name":
                self._started(item[1])
            elif item[0] == "valued":
                valued = True
            else:
                (deep if item[0] == "deep" else values).append(item[1:])
        self._take(values)
        self._take(deep, self.deep, self.confirm_nodes)
        if valued and self.lane is not None:
            self.lane.no_more()

    def _started(self, name: str) -> None:
        if self.job.engine_name != name:
            self.job.engine_name = name
            AnalysisJob.objects.filter(pk=self.job.pk).update(engine_name=name)
            self.status()  # the live page names the engine (its line, figure, list) from the job's status
        self._note("")
        self.deep.update(stored_engine_values(self.job, self.keys, self.confirm_nodes))
        stored = stored_engine_values(self.job, self.keys)
        self._take([(key, data, None) for key, data in stored.items()])
        self.lane.proceed(set(stored))

    def finish(self, check: Callable[[], None]) -> None:
        """Wait for the lane's last values; ``check`` raises to stop waiting (cancel, shutdown)."""
        if self.lane is None:
            return
        ended = False
        while not ended:
            items, ended = self.lane.next(WAIT_POLL)
            self._handle(items)
            if not ended:
                check()
        self._end_lane()

    def abandon(self) -> None:
        """The pass stops early: keep what the engine has finished, let its thread end by itself."""
        if self.lane is not None:
            self.lane.stop()
            self._handle(self.lane.ready())
            self.lane = None

    def _end_lane(self) -> None:
        lane, self.lane = self.lane, None
        lane.join()
        if lane.failure:
            log.warning("job %s: %s", self.job.id, lane.failure)
            self._note(lane.failure)

    def judged(self, node_id: int) -> bool:
        """Whether the engine has judged the move that led to ``node_id`` (its mark replaces the network's)."""
        parent = self.job.nodes[node_id]["parent"] if node_id < len(self.job.nodes) else None
        return parent is not None and self.keys[parent] in self.values and self.keys[node_id] in self.values

    def _take(self, finished: list[tuple[str, dict, float | None]], into: dict | None = None,
              nodes: int | None = None) -> None:
        """Store fresh values (``compute_ms`` not None) and announce every node they touch; ``into``
        and ``nodes``: where they go and their budget (the lane's values by default)."""
        if not finished:
            return
        into = self.values if into is None else into
        fresh = [PositionResult(position_key=key, network_checksum=engine_checksum(self.job.engine_name),
                                settings_key=engine_settings_key(nodes or self.job.engine_nodes), data=data,
                                compute_ms=ms)
                 for key, data, ms in finished if ms is not None]
        if fresh:
            self.store(fresh)
        for key, data, _ in finished:
            into[key] = data
        self._announce({key for key, _, _ in finished})

    def _announce(self, keys: set[str]) -> None:
        nodes, touched = self.job.nodes, set()
        for node_id, key in enumerate(self.keys):
            if key in keys:
                touched.add(node_id)
                touched.update(c for c in nodes[node_id]["children"] if self.keys[c] in self.values)
        items = []
        for node_id in sorted(touched):
            value = self.values.get(self.keys[node_id])
            judgement = self._judgement(node_id)
            items.append((nodes[node_id], value, judgement))
            if self.on_value is not None:
                self.on_value(node_id, value, judgement)
        self.announce(items)

    def _judgement(self, node_id: int) -> dict | None:
        if not self.judged(node_id):
            return None
        node = self.job.nodes[node_id]
        before, after = self.keys[node["parent"]], self.keys[node_id]
        judgement = checked_judgement(node["uci"], self.values[before], self.values[after], self.deep.get(before),
                                      self.deep.get(after), self.confirm_nodes)
        if judgement.get("confirming"):
            self._ask_confirmation((node["parent"], before), (node_id, after))
        return judgement

    def _ask_confirmation(self, *positions: tuple[int, str]) -> None:
        """Hand the lane the positions of a mark to confirm (each once; none once the lane has ended)."""
        for node_id, key in positions:
            if self.lane is not None and key not in self.deep and key not in self.asked and node_id < len(self.boards):
                self.asked.add(key)
                self.lane.confirm(Work(key, self.boards[node_id]))

    def _note(self, text: str) -> None:
        if self.job.engine_note != text:
            self.job.engine_note = text
            AnalysisJob.objects.filter(pk=self.job.pk).update(engine_note=text)
            self.status()
