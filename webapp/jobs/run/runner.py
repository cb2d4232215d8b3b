"""The analysis of one job: evaluate every position in batches, then search each one
and judge the moves played from it (see ``webapp.jobs.judgements``).

Each finished position is saved (``PositionResult``, keyed by what the network
sees) before a small message about it is published, so a page that misses a
message finds the result in the database. Cancellation is checked between
batches and during searches.

A job runs under a lease on its row (webapp.jobs.run.lease), renewed by a
heartbeat thread: a second delivery of the same job does nothing while the
lease is held, and a job whose lease is lost, or whose worker is shutting
down, stops at its next check and leaves the rest to the next holder, which
finds the finished positions in the cache.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from typing import Callable

import chess
from django.conf import settings
from django.db import transaction
from django.db.models import F

from analysis.evaluator import ForwardingEvaluator
from analysis.search.shown_value import position_valuer
from webapp.jobs.run import lease
from webapp.jobs.run.engine_pass import EnginePass
from webapp.jobs.gameinput import node_boards
from webapp.jobs.run.heartbeat import Heartbeat
from webapp.jobs.judgements import JudgeRequest, judge_all, judgement_settings_key
from webapp.jobs.live.messages import Engine, Judgements, Plies, Ply, Progress
from webapp.jobs.models import AnalysisJob, PositionResult
from webapp.jobs.live.publish import publish_status
from webapp.jobs.results import digest_key, evaluation_json, search_json
from webapp.jobs.searching import budget_for, make_search
from webapp.jobs.run.timelines import TimelineLane
from workers import shutdown
from workers.claims import PositionClaims

log = logging.getLogger(__name__)

Publisher = Callable[[str, dict], None]
# Progress messages per second per running search, at most.
PROGRESS_RATE = 4.0
# How often the job's status is re-read to notice a cancel (seconds): by a running search,
# and between positions when the searches are quick (a status query per position would cost
# as much as a quick search).
CANCEL_POLL = 0.5
# Quick searches are saved together: results finished within this many seconds share one
# commit (a commit per position, with its count update, would cost as much as the search).
# A search that takes longer than this is saved and published on its own, as soon as it is done.
SAVE_INTERVAL = 0.05
# How often a job waiting for a position that another job is searching looks for its result.
SHARED_POLL = 0.1
# The first batch is small so the first plies reach the page quickly; later batches are full.
FIRST_BATCH = 4
# Evaluations finished together are published together (each is about 1.5 kB of JSON,
# far below the channel layer's 1 MB cap), so a viewer gets one message per batch.
EVALS_PER_MESSAGE = 32


class JobCancelled(Exception):
    pass


class JobInterrupted(Exception):
    """The worker is shutting down, or the lease was lost: stop and leave the job to its next holder."""


@dataclass
class PlyOutput:
    """What one node got; handed to ``on_node`` (the analyze_pgn command prints it)."""

    node_id: int
    eval: dict | None = None
    search: dict | None = None
    judgement: dict | None = None  # the network's, of the move that led to this node
    engine: dict | None = None  # the engine lane's value of this node
    engine_judgement: dict | None = None  # the engine's, of the move that led to this node


@dataclass
class JobRun:
    job: AnalysisJob
    evaluator: object
    publish: Publisher
    on_node: Callable[[PlyOutput], None] | None = None
    batch_size: int = field(default_factory=lambda: settings.SIGHTLINE_BATCH_SIZE)
    # The decision timeline, read from phase 1's own forward passes (webapp.jobs.run.timelines);
    # off only to measure what it costs (bench/timeline.py).
    timeline: bool = True

    def __post_init__(self):
        self.memo = MemoEvaluator(self.evaluator)
        self.timelines = TimelineLane(self.evaluator, self.timeline)
        # The value shown for each position is the network family's choice (``analysis.displayed_value``);
        # the network's own marks value successors the same way.
        self.valuer = position_valuer(self.job.network.displayed_value, self.memo)
        self.judging_evaluator = self.valuer.evaluator(self.memo)
        self.engine = self._engine_pass()

    def _engine_pass(self) -> EnginePass:
        """The engine lane's side of one pass (a new one per pass: the pass's nodes, its values)."""
        return EnginePass(self.job, store_results, lambda items: Engine.of(items).send(self.publish),
                          self._publish_status, self._on_engine_value)

    def run(self) -> AnalysisJob:
        job = self.job
        self.owner = lease.new_owner()
        if not lease.claim(job.pk, self.owner):
            job.refresh_from_db()
            log.info("job %s is %s (lease held by %r); not running it", job.id, job.status, job.lease_owner)
            return job
        # The policy search is one lookup in phase 1's evaluations: nothing worth sharing.
        self.claims = PositionClaims(f"{job.network.checksum}:{job.search_settings_key}", enabled=job.search != "policy")
        try:
            with Heartbeat(job.pk, self.owner, also=self.claims.renew) as self.heartbeat:
                self._run_claimed()
        finally:
            self.claims.release_all()
        job.refresh_from_db()
        publish_status(job, self.publish)
        return job

    def _run_claimed(self) -> None:
        job = self.job
        job.refresh_from_db()
        publish_status(job, self.publish)
        try:
            while True:
                analysed = len(job.nodes)
                self._analyse_nodes()
                # Done only with the nodes just analysed: a line played on the board meanwhile
                # (webapp.jobs.variations) grew the tree, and the next pass takes it. (A job
                # made by hand may have no count of its positions: then it is done as it is.)
                total = analysed if job.total_positions == analysed else None
                if lease.finish(job.pk, self.owner, status=AnalysisJob.Status.DONE, total=total):
                    log.info("job %s finished: done", job.id)
                    return
                self._check_cancelled()
                job.refresh_from_db()
                if job.lease_owner != self.owner or job.status != AnalysisJob.Status.RUNNING \
                        or len(job.nodes) == analysed:
                    raise JobInterrupted()
                AnalysisJob.objects.filter(pk=job.pk).update(evaluated=0, searched=0)  # the pass recounts
        except JobCancelled:
            return
        except JobInterrupted:
            log.warning("job %s interrupted (worker shutting down or lease lost); it resumes elsewhere", job.id)
            lease.release(job.pk, self.owner)
            return
        except Exception as exc:
            log.exception("job %s failed", job.id)
            lease.finish(job.pk, self.owner, status=AnalysisJob.Status.FAILED, error=f"{type(exc).__name__}: {exc}")

    def _analyse_nodes(self) -> None:
        """One pass over the job's nodes: stored results are announced, the rest computed."""
        job = self.job
        boards = node_boards(job.nodes)
        # Keys were set when the job was created (webapp.jobs.keys); a node without
        # one (a job made by hand) gets its key here, in memory only.
        keys = [node.get("key") or digest_key(self.evaluator.cache_key(b)) for node, b in zip(job.nodes, boards)]
        self.engine = self._engine_pass()
        try:
            # Stockfish starts once the first plies are out (``_evaluate_all``), then works on its
            # own thread while the network does: its start never delays the first ply.
            evals = self._evaluate_all(boards, keys)
            self._search_all(boards, keys, evals)
            self.engine.finish(self._check_cancelled)
        except BaseException:
            self.engine.abandon()
            raise

    def _publish_status(self) -> None:
        publish_status(AnalysisJob.objects.select_related("network").get(pk=self.job.pk), self.publish)

    def _on_engine_value(self, node_id: int, value: dict | None, judgement: dict | None) -> None:
        if self.on_node is not None:
            self.on_node(PlyOutput(node_id, engine=value, engine_judgement=judgement))

    # -- phase 1: one forward pass per batch ------------------------------------------
    def _evaluate_all(self, boards: list[chess.Board], keys: list[str]) -> dict[str, dict]:
        """Evaluate every position not in the cache; returns {key: stored JSON}.

        The fresh ``Evaluation`` objects are kept in ``self.memo`` so the searches
        of phase 2 do not run the network again on positions it has just seen. The
        stored score is the shown value (``self.valuer``), with the static one beside it
        where they differ in kind.
        """
        job = self.job
        checksum, settings_key = job.network.checksum, job.eval_settings_key
        known = dict(PositionResult.objects.filter(network_checksum=checksum, settings_key=settings_key,
                                                   position_key__in=set(keys)).values_list("position_key", "data"))
        by_key: dict[str, list[int]] = {}
        for node_id, key in enumerate(keys):
            by_key.setdefault(key, []).append(node_id)
        done = sorted(node_id for key in known for node_id in by_key[key])
        self._bump(evaluated=len(done))
        self._emit_evals(done, keys, known)
        if done:
            self.engine.start(boards)
        missing = [key for key in by_key if key not in known]  # main line first: keys keep node order
        for batch in _batches(missing, self.batch_size):
            self._check_cancelled()
            t0 = time.perf_counter()
            batch_boards = [boards[by_key[k][0]] for k in batch]
            results, timelines = self.timelines.evaluate(batch_boards)
            # Each legal move's predicted win probability, shown beside the policy (action-value heads).
            actions = self.evaluator.evaluate_actions(batch_boards) if self.evaluator.capabilities.action_values \
                else [None] * len(batch)
            for board, ev in zip(batch_boards, results):
                self.memo.remember(self.evaluator.cache_key(board), ev)
            shown = self.valuer.shown(batch_boards, results)
            per_position_ms = (time.perf_counter() - t0) * 1000.0 / len(batch)
            rows = []
            for key, ev, values, value, timeline in zip(batch, results, actions, shown, timelines):
                known[key] = evaluation_json(ev, boards[by_key[key][0]], values, shown=value)
                if timeline is not None:
                    known[key]["timeline"] = timeline
                rows.append(PositionResult(position_key=key, network_checksum=checksum,
                                           settings_key=settings_key, data=known[key],
                                           compute_ms=per_position_ms))
            node_ids = sorted(n for k in batch for n in by_key[k])
            with transaction.atomic():
                store_results(rows)
                self._bump(evaluated=len(node_ids))
            self._emit_evals(node_ids, keys, known)
            self.engine.start(boards)  # after the first batch: does nothing once started
            self.engine.collect()
        self.engine.start(boards)
        return known

    # -- phase 2: the chosen search, position by position ---------------------------------
    def _search_all(self, boards: list[chess.Board], keys: list[str], evals: dict[str, dict]) -> None:
        job = self.job
        checksum, settings_key = job.network.checksum, job.search_settings_key
        known = dict(PositionResult.objects.filter(network_checksum=checksum, settings_key=settings_key,
                                                   position_key__in=set(keys)).values_list("position_key", "data"))
        judged = self._known_judgements(keys)
        search = make_search(job.search, self.memo)
        budget = budget_for(job.search, job.budget)
        pending = _PendingSaves()
        polled, deferred = None, []
        try:
            for node_id, key in enumerate(keys):
                started = time.monotonic()
                if polled is None or time.monotonic() - polled >= CANCEL_POLL:
                    self._check_cancelled()
                    polled = time.monotonic()
                if not _has_search(known, key) and not self.claims.take(key):
                    deferred.append(node_id)  # another job is searching it right now: later
                    continue
                self._search_one(node_id, boards[node_id], key, search, budget, known, evals, pending, started)
                self._plan_judgements(pending, node_id, boards[node_id], key, known[key], judged)
                if pending.due():
                    self._save_searches(pending, keys, known)
            self._save_searches(pending, keys, known)
            for node_id in deferred:
                self._take_over_or_wait(node_id, keys[node_id], known)
                self._search_one(node_id, boards[node_id], keys[node_id], search, budget, known, evals, pending,
                                 time.monotonic())
                self._plan_judgements(pending, node_id, boards[node_id], keys[node_id], known[keys[node_id]], judged)
                self._save_searches(pending, keys, known)
        except JobCancelled:  # the finished results are complete: keep them
            self._save_searches(pending, keys, known)
            raise
        self._save_searches(pending, keys, known)

    def _known_judgements(self, keys: list[str]) -> dict[tuple[str, str], dict]:
        """Stored judgements of this job's moves: {(parent key, judgement settings key): data}."""
        wanted = {judgement_settings_key(self.job.search_settings_key, node["uci"])
                  for node in self.job.nodes if node["parent"] is not None}
        if not wanted:
            return {}
        rows = PositionResult.objects.filter(network_checksum=self.job.network.checksum, settings_key__in=wanted,
                                             position_key__in=set(keys))
        return {(k, s): data for k, s, data in rows.values_list("position_key", "settings_key", "data")}

    def _plan_judgements(self, pending: "_PendingSaves", node_id: int, board: chess.Board, key: str,
                         search: dict, judged: dict) -> None:
        """Queue the judgement of every move played from this node (stored ones are only announced)."""
        for child in self.job.nodes[node_id]["children"]:
            uci = self.job.nodes[child]["uci"]
            stored = judged.get((key, judgement_settings_key(self.job.search_settings_key, uci)))
            if stored is not None:
                pending.judged.setdefault(node_id, []).append((child, stored))
            else:
                pending.requests.append(JudgeRequest(child, node_id, key, board, chess.Move.from_uci(uci), search))

    def _judge(self, pending: "_PendingSaves") -> list[PositionResult]:
        """Judge the pending requests (one network batch for those the search cannot judge); rows to save."""
        rows = []
        for request, judgement in zip(pending.requests, judge_all(self.judging_evaluator, pending.requests)):
            if judgement is None:
                continue
            rows.append(PositionResult(
                position_key=request.parent_key, network_checksum=self.job.network.checksum,
                settings_key=judgement_settings_key(self.job.search_settings_key, request.played.uci()),
                data=judgement))
            pending.judged.setdefault(request.parent_id, []).append((request.node_id, judgement))
        return rows

    def _search_one(self, node_id, board, key, search, budget, known, evals, pending, started) -> None:
        """Search ``board`` unless its result is known, and queue the result for saving."""
        if not _has_search(known, key):  # rows from before judgements lack root values: search again
            t0 = time.perf_counter()
            result = search.run(board, budget, progress=self._progress_reporter(node_id, board, search))
            if result.stopped:
                self._check_cancelled()
            known[key] = search_json(result, board, known_san=_policy_san(evals.get(key)))
            pending.rows.append(PositionResult(
                position_key=key, network_checksum=self.job.network.checksum,
                settings_key=self.job.search_settings_key, data=known[key],
                compute_ms=(time.perf_counter() - t0) * 1000.0))
        pending.add(node_id, started)

    def _take_over_or_wait(self, node_id: int, key: str, known: dict[str, dict]) -> None:
        """Wait for another job's result for ``key``; claim it when that job let go without one."""
        while key not in known:
            found = PositionResult.objects.filter(network_checksum=self.job.network.checksum,
                                                  settings_key=self.job.search_settings_key,
                                                  position_key=key).values_list("data", flat=True).first()
            if found is not None:
                known[key] = found
            elif not self.claims.held_elsewhere(key) and self.claims.take(key):
                return
            else:
                self._check_cancelled()
                time.sleep(SHARED_POLL)

    def _save_searches(self, pending: "_PendingSaves", keys: list[str], known: dict[str, dict]) -> None:
        """One commit for the pending results, judgements and count, then the messages."""
        if not pending.nodes:
            return
        self.engine.collect()  # first, so a move the engine has judged keeps the engine's mark
        judgement_rows = self._judge(pending)
        with transaction.atomic():
            if pending.rows:
                store_results(pending.rows)
            if judgement_rows:
                store_results(judgement_rows)
            self._bump(searched=len(pending.nodes))
        self.claims.saved([row.position_key for row in pending.rows])
        nodes, judged = pending.nodes, pending.judged
        pending.clear()
        items = []
        for node_id in nodes:  # a move's judgement follows its parent's search
            self._emit(node_id, "search", known[keys[node_id]])
            for child, judgement in judged.get(node_id, ()):
                items.append((self.job.nodes[child], judgement))
                if self.on_node is not None:
                    self.on_node(PlyOutput(child, judgement=judgement))
        if items:
            Judgements.of(items, engine_judged={node["id"] for node, _ in items if self.engine.judged(node["id"])}) \
                .send(self.publish)

    def _progress_reporter(self, node_id: int, board: chess.Board, search):
        last = {"sent": 0.0, "polled": time.monotonic()}

        def report(snapshot) -> None:
            now = time.monotonic()
            if now - last["polled"] >= CANCEL_POLL:
                last["polled"] = now
                if self._interrupted() or _status(self.job) == AnalysisJob.Status.CANCELLED:
                    search.stop(timeout=0)
            if snapshot.final or now - last["sent"] < 1.0 / PROGRESS_RATE:
                return
            last["sent"] = now
            Progress.of(node_id, snapshot, board).send(self.publish)

        return report

    # -- helpers ----------------------------------------------------------------------
    def _emit_evals(self, node_ids: list[int], keys: list[str], known: dict[str, dict]) -> None:
        """A batch's evaluations go out together: one message per ``EVALS_PER_MESSAGE`` plies."""
        for start in range(0, len(node_ids), EVALS_PER_MESSAGE):
            chunk = node_ids[start:start + EVALS_PER_MESSAGE]
            Plies.of([(self.job.nodes[n], known[keys[n]]) for n in chunk], self.job.nodes).send(self.publish)
        if self.on_node is not None:
            for node_id in node_ids:
                self.on_node(PlyOutput(node_id, eval=known[keys[node_id]]))

    def _emit(self, node_id: int, part: str, data: dict) -> None:
        Ply.of(self.job.nodes[node_id], **{part: data}).send(self.publish)
        if self.on_node is not None:
            self.on_node(PlyOutput(node_id, **{part: data}))

    def _bump(self, **counts: int) -> None:
        if any(counts.values()):
            AnalysisJob.objects.filter(pk=self.job.pk).update(**{k: F(k) + v for k, v in counts.items()})

    def _check_cancelled(self) -> None:
        if _status(self.job) == AnalysisJob.Status.CANCELLED:
            raise JobCancelled()
        if self._interrupted():
            raise JobInterrupted()

    def _interrupted(self) -> bool:
        return shutdown.requested.is_set() or self.heartbeat.lost.is_set()


# The unique constraint of PositionResult: what a stored result is the answer for.
RESULT_IDENTITY = ["position_key", "network_checksum", "settings_key"]


class NonFiniteResult(ValueError):
    """A result holding NaN or infinity: JSON cannot carry it, so it is never stored."""


def store_results(rows: list[PositionResult]) -> None:
    """Insert result rows; one already stored for the same position, network and settings is updated.

    That conflict is expected: two jobs (or a redelivered run) computing one position at the same
    time, each with the same network's answer for the same input, so the newer row wins. Anything
    else raises. (``ignore_conflicts`` became INSERT OR IGNORE on SQLite, which also skipped rows
    failing the JSON validity check: results with NaN vanished while the job reported them done.)
    """
    for row in rows:
        try:
            json.dumps(row.data, allow_nan=False)
        except ValueError:
            raise NonFiniteResult(f"the {row.settings_key} result for position {row.position_key[:12]} "
                                  f"holds NaN or infinity: {str(row.data)[:200]}") from None
    PositionResult.objects.bulk_create(rows, update_conflicts=True, unique_fields=RESULT_IDENTITY,
                                       update_fields=["data", "compute_ms"])


def _has_search(known: dict[str, dict], key: str) -> bool:
    """A usable stored search for ``key``: one with every root move's value (judgements need them)."""
    return key in known and "root_values" in known[key]


class MemoEvaluator(ForwardingEvaluator):
    """The job's evaluator, answering from phase 1's evaluations where it can.

    A search starts by evaluating its root, which phase 1 has just done (the
    policy search does nothing else); only plain requests (no attention,
    temperature 1) are served from memory.
    """

    def __init__(self, inner):
        super().__init__(inner)
        self._seen: dict = {}
        self.hits = 0

    def remember(self, key, evaluation) -> None:
        """``key`` is ``cache_key(board)`` of the evaluated board (the caller has it already)."""
        self._seen[key] = evaluation

    def evaluate(self, boards, *, attention: bool = False, temperature: float = 1.0):
        if attention or temperature != 1.0 or not self._seen:
            return self.inner.evaluate(boards, attention=attention, temperature=temperature)
        keys = [self.inner.cache_key(b) for b in boards]
        missing = [i for i, k in enumerate(keys) if k not in self._seen]
        fresh = self.inner.evaluate([boards[i] for i in missing]) if missing else []
        found = dict(zip(missing, fresh))
        self.hits += len(boards) - len(missing)
        return [found[i] if i in found else self._seen[k] for i, k in enumerate(keys)]


class _PendingSaves:
    """Searched positions not saved yet: rows to write, node ids to count and announce, moves to judge."""

    def __init__(self):
        self.clear()

    def clear(self) -> None:
        self.rows: list[PositionResult] = []
        self.nodes: list[int] = []
        self.requests: list[JudgeRequest] = []  # moves to judge, played from the pending nodes
        self.judged: dict[int, list[tuple[int, dict]]] = {}  # {parent node: [(child node, judgement)]}
        self.since: float | None = None

    def add(self, node_id: int, started: float) -> None:
        """``started``: when work on this position began (``time.monotonic()``)."""
        if self.since is None:
            self.since = started
        self.nodes.append(node_id)

    def due(self) -> bool:
        """True once the oldest pending position began ``SAVE_INTERVAL`` ago or more, so a
        search slower than that is saved as soon as it is done."""
        return self.since is not None and time.monotonic() - self.since >= SAVE_INTERVAL


def _policy_san(evaluation: dict | None) -> dict[str, str]:
    """{uci: san} already written for this position's likeliest policy moves in phase 1."""
    if not evaluation:
        return {}
    return {uci: san for uci, _, san in evaluation.get("policy", ()) if san}


def _batches(items: list, size: int):
    """``FIRST_BATCH`` items, then chunks of ``size``."""
    start = 0
    while start < len(items):
        step = min(FIRST_BATCH, size) if start == 0 else size
        yield items[start:start + step]
        start += step


def _status(job: AnalysisJob) -> str:
    return AnalysisJob.objects.filter(pk=job.pk).values_list("status", flat=True).first()
