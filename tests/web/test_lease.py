"""The job lease: one holder at a time, renewals, hand-back at shutdown, and the reaper."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from analysis.evaluator import MaterialEvaluator
from tests.web.conftest import SHORT_GAME
from webapp.jobs.run import lease
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.models import AnalysisJob
from webapp.jobs.run import reaper
from workers import shutdown
from webapp.jobs.run.runner import JobRun
from workers.shutdown import CooperativeSoloPool, CooperativeThreadPool

pytestmark = pytest.mark.django_db


@pytest.fixture
def job(material_network):
    return create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False)


def row(job) -> AnalysisJob:
    return AnalysisJob.objects.get(pk=job.pk)


def test_only_one_holder_until_the_lease_runs_out(job):
    assert lease.claim(job.pk, "a")
    assert not lease.claim(job.pk, "b")  # a second delivery while "a" works: nothing to do
    assert lease.renew(job.pk, "a") and not lease.renew(job.pk, "b")
    AnalysisJob.objects.filter(pk=job.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert lease.claim(job.pk, "b")  # "a" stopped renewing: its worker is gone
    assert not lease.renew(job.pk, "a")  # and "a", should it wake up, learns it lost the job
    assert not lease.finish(job.pk, "a", status="done")
    assert lease.finish(job.pk, "b", status="done") and row(job).status == "done"
    assert not lease.claim(job.pk, "c")  # finished jobs are never claimed again


def test_release_frees_the_job_at_once(job):
    assert lease.claim(job.pk, "a")
    lease.release(job.pk, "a")
    assert row(job).status == "running" and row(job).lease_owner == ""
    assert lease.claim(job.pk, "b")


def test_a_second_run_of_a_held_job_does_nothing(job):
    assert lease.claim(job.pk, "elsewhere")
    result = JobRun(job, MaterialEvaluator(), lambda kind, payload: None).run()
    assert result.status == "running" and result.searched == 0 and result.lease_owner == "elsewhere"


@pytest.mark.django_db(transaction=True)
def test_shutdown_interrupts_a_job_and_hands_back_its_lease(job, monkeypatch):
    """What the threads/solo pools' cold shutdown does (Celery's own raise NotImplementedError)."""
    CooperativeThreadPool.terminate_job(object.__new__(CooperativeThreadPool), 0)
    try:
        assert shutdown.requested.is_set()
        result = JobRun(job, MaterialEvaluator(), lambda kind, payload: None).run()
    finally:
        shutdown.requested.clear()
    assert result.status == "running" and result.lease_owner == "" and result.searched < len(result.nodes)
    # The next run (the next worker) claims it and finishes it.
    done = JobRun(row(job), MaterialEvaluator(), lambda kind, payload: None).run()
    assert done.status == "done" and done.searched == len(done.nodes)
    assert issubclass(CooperativeSoloPool, shutdown._AsksJobsToStop)


def test_reaper_finds_jobs_nobody_runs(material_network, job):
    fresh = create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False)
    assert list(reaper.stale_jobs()) == []  # just created: the web process is sending it
    old = timezone.now() - timedelta(seconds=lease.lease_seconds() + 1)
    AnalysisJob.objects.filter(pk=fresh.pk).update(created_at=old)  # never sent
    assert lease.claim(job.pk, "dead")
    AnalysisJob.objects.filter(pk=job.pk).update(lease_until=timezone.now() - timedelta(seconds=1))  # worker died
    legacy = create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False)
    AnalysisJob.objects.filter(pk=legacy.pk).update(status="running", task_id=str(legacy.pk))  # "running" for ever
    stale = {j.pk: j for j in reaper.stale_jobs()}
    assert set(stale) == {fresh.pk, job.pk, legacy.pk}
    # Two reapers race for the same job: one wins.
    assert lease.hold_for_dispatch(job.pk, stale[job.pk].lease_until)
    assert not lease.hold_for_dispatch(job.pk, stale[job.pk].lease_until)
    assert row(job).lease_owner == "" and row(job).lease_until > timezone.now()
    assert lease.claim(job.pk, "next")  # the re-sent task's worker takes it at once
