"""Two identical jobs at once search each position once between them (workers/claims.py)."""

from __future__ import annotations

import threading

import pytest
from django.db import close_old_connections

from analysis.evaluator import MaterialEvaluator
from tests.web.test_worker_faults import GAME
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.models import AnalysisJob
from webapp.site.embedded_redis import EmbeddedRedis
from webapp.site.redis_urls import RedisUrls
from webapp.jobs.run import runner
from webapp.jobs.run.runner import JobRun

pytestmark = pytest.mark.django_db(transaction=True)


def test_identical_concurrent_jobs_share_every_position(material_network, settings, tmp_path, monkeypatch):
    server = EmbeddedRedis(tmp_path / "redis.sock").start()
    settings.REDIS = RedisUrls.for_socket(server.socket_path)
    searched: list[str] = []
    lock = threading.Lock()
    real_make_search = runner.make_search

    def counting_make_search(name, evaluator):
        search = real_make_search(name, evaluator)
        run = search.run

        def counted(board, budget, **kwargs):
            with lock:
                searched.append(board.fen())
            return run(board, budget, **kwargs)

        search.run = counted
        return search

    monkeypatch.setattr(runner, "make_search", counting_make_search)
    jobs = [create_job(parse_pgn(GAME), material_network, "alphabeta", 2, dispatch=False) for _ in range(2)]
    errors: list[BaseException] = []

    def run(job):
        try:
            JobRun(job, MaterialEvaluator(), lambda kind, payload: None).run()
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            close_old_connections()

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(240)
    finally:
        server.stop()
    assert not errors, errors
    for job in jobs:
        row = AnalysisJob.objects.get(pk=job.pk)
        assert row.status == "done" and row.searched == row.total_positions == 17, row.error
    assert len(searched) == len(set(searched)) == 17  # each position once, by one job or the other
