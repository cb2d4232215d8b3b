"""Faults with real processes: Celery workers (``celery worker``, threads pool, as ``serve`` runs
them) against the embedded Redis with persistence, on the test database.

A worker killed with SIGKILL mid-job: another worker finishes the job exactly once with every
ply. Redis restarted mid-job: the worker rides it out and the job finishes. The lease and the
reaper run with short, test-only timings (``SIGHTLINE_JOB_LEASE_S``, ``SIGHTLINE_REAP_INTERVAL_S``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from celery import Celery
from django.conf import settings

from tests.conftest import ROOT
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.models import AnalysisJob, PositionResult
from webapp.site.embedded_redis import EmbeddedRedis
from webapp.site.redis_urls import RedisUrls

# Real processes on a shared machine: more than pytest.ini's 300 s per test may be needed.
pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True), pytest.mark.timeout(900)]

# 17 positions; MCTS over the material evaluator takes a second or so a position here.
GAME = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O *"
BUDGET = 300
# Short lease and reaper period for tests; the defaults (30 s and 10 s) are in settings.
FAST = {"SIGHTLINE_JOB_LEASE_S": os.environ.get("SIGHTLINE_TEST_LEASE_S", "5"),
        "SIGHTLINE_REAP_INTERVAL_S": os.environ.get("SIGHTLINE_TEST_REAP_S", "1")}


@pytest.fixture
def redis_server(tmp_path):
    server = EmbeddedRedis(tmp_path / "redis" / "redis.sock", persist=True).start()
    yield server
    server.stop()


@pytest.fixture
def broker(redis_server, settings):
    """The test's Celery app sends to the embedded Redis (workers run in other processes)."""
    from workers.celery_app import app as site_app

    urls = RedisUrls.for_socket(redis_server.socket_path)
    app = Celery("sightline-test", set_as_current=True)
    app.config_from_object("django.conf:settings", namespace="CELERY")
    app.conf.update(broker_url=urls.celery_broker, result_backend=urls.celery_backend)
    app.finalize()
    yield urls
    site_app.set_current()


class Worker:
    """``celery worker`` in its own process group, logging to a file."""

    def __init__(self, name: str, urls: RedisUrls, folder: Path):
        self.log_path = folder / f"{name}.log"
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
        env.update(FAST, DATABASE_URL=f"sqlite:///{settings.DATABASES['default']['NAME']}",
                   REDIS_URL=f"unix://{urls.socket_path}", SIGHTLINE_BATCH_SIZE="4", PYTHONUNBUFFERED="1",
                   DJANGO_SETTINGS_MODULE="webapp.settings")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "workers.celery_app", "worker", "-Q", "cpu,gpu", "--pool",
             "threads", "--concurrency", "2", "-n", f"{name}@%h", "--without-gossip", "--without-mingle",
             "--loglevel", "INFO"],
            cwd=ROOT, env=env, stdout=self.log_path.open("w"), stderr=subprocess.STDOUT, start_new_session=True)

    @property
    def log(self) -> str:
        return self.log_path.read_text()

    def wait_ready(self, timeout: float = 240) -> None:  # a busy shared machine starts slowly
        wait_for(lambda: "ready." in self.log or self.process.poll() is not None, timeout, lambda: self.log)
        assert self.process.poll() is None, self.log[-3000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(30)


def wait_for(condition, timeout: float, describe=lambda: "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s\n{describe()[-4000:]}")
        time.sleep(0.1)


def job_row(job) -> AnalysisJob:
    return AnalysisJob.objects.get(pk=job.pk)


def start_job(network):
    from webapp.jobs.jobs import create_job

    return create_job(parse_pgn(GAME), network, "mcts", BUDGET)


def assert_finished_once(job, workers) -> None:
    row = job_row(job)
    assert row.status == "done", row.error
    assert row.searched == row.total_positions == len(row.nodes) == 17
    keys = {node["key"] for node in row.nodes}
    stored = PositionResult.objects.filter(settings_key=row.search_settings_key, position_key__in=keys).count()
    assert stored == len(keys)
    finished = sum(w.log.count(f"job {job.pk} finished: done") for w in workers)
    assert finished == 1, "\n".join(w.log[-2000:] for w in workers)


def test_killed_worker_job_is_finished_once_by_another(broker, material_network, tmp_path):
    workers = [Worker("first", broker, tmp_path), Worker("second", broker, tmp_path)]
    try:
        for worker in workers:
            worker.wait_ready()
        job = start_job(material_network)
        wait_for(lambda: job_row(job).searched >= 2, 300, lambda: "\n".join(w.log for w in workers))
        holder, spare = workers if f"[{job.pk}] received" in workers[0].log else workers[::-1]
        holder.stop()  # SIGKILL: no shutdown, no ack, the lease is left to run out
        killed_at = time.monotonic()
        assert job_row(job).status == "running", "the job finished before the kill; make it longer"
        wait_for(lambda: "dispatching it again" in spare.log, 300, lambda: spare.log)
        resumed_at = time.monotonic()
        wait_for(lambda: job_row(job).status != "running", 600, lambda: spare.log)
        print(f"\nresumed {resumed_at - killed_at:.1f} s after the kill, done {time.monotonic() - killed_at:.1f} s "
              f"after it (lease {FAST['SIGHTLINE_JOB_LEASE_S']} s, reaper every {FAST['SIGHTLINE_REAP_INTERVAL_S']} s)")
        assert_finished_once(job, workers)
        assert "Traceback" not in spare.log, spare.log[-3000:]
    finally:
        for worker in workers:
            worker.stop()


def test_worker_rides_out_a_redis_restart(broker, redis_server, material_network, tmp_path):
    worker = Worker("worker", broker, tmp_path)
    try:
        worker.wait_ready()
        job = start_job(material_network)
        wait_for(lambda: job_row(job).searched >= 2, 300, lambda: worker.log)
        redis_server.stop()  # SIGTERM: Redis writes its append-only file and exits
        time.sleep(3)
        redis_server.start()
        wait_for(lambda: job_row(job).status != "running", 600, lambda: worker.log)
        assert_finished_once(job, [worker])
        assert worker.process.poll() is None, worker.log[-3000:]
        # After the restart the worker still takes new jobs.
        again = start_job(material_network)
        wait_for(lambda: job_row(again).status != "queued", 300, lambda: worker.log)
        assert "AttributeError" not in worker.log, worker.log[-3000:]
    finally:
        worker.stop()
