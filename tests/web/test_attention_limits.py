"""Attention computations a job link can queue are limited per analysis and per browser session."""

from datetime import timedelta

import pytest
from django.test import Client

from tests.web.conftest import SHORT_GAME
from webapp.lens import attention_limits
from webapp.ondemand.limits import LIMITS
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.models import AttentionMap
from webapp.lens import tasks
from webapp.networks.model_cache import ModelCache
from webapp.jobs.run.runner import JobRun

pytestmark = pytest.mark.django_db


@pytest.fixture
def job_and_queue(tiny_network, monkeypatch):
    """An analysed 9-position job, and the list its attention tasks are queued on."""
    job = create_job(parse_pgn(SHORT_GAME), tiny_network, "policy", 1, dispatch=False)
    JobRun(job, ModelCache().get(tiny_network), lambda kind, payload: None).run()
    queued = []
    monkeypatch.setattr("workers.dispatch.send_task", lambda name, args, queue: queued.append(args[1]))
    return job, queued


def url(job, node):
    return f"/api/jobs/{job.id}/nodes/{node}/attention/"


def test_one_analysis_has_at_most_eight_computations_queued(client, job_and_queue):
    job, queued = job_and_queue
    for node in range(8):
        assert client.get(url(job, node)).status_code == 202
    refused = client.get(url(job, 8))
    assert refused.status_code == 429 and refused["Retry-After"] == "2"
    assert "8 attention maps of this analysis are queued" in refused.json()["error"]
    assert Client().get(url(job, 8)).status_code == 429  # another browser: the same analysis, the same limit
    assert queued == list(range(8)) and AttentionMap.objects.count() == 8
    assert client.get(url(job, 3)).status_code == 202  # asking again for queued work is not new work
    assert tasks.compute_attention.run(str(job.id), 3) == "ready"
    assert client.get(url(job, 8)).status_code == 202 and queued[-1] == 8


def test_a_lost_computation_stops_counting_after_a_while(client, job_and_queue):
    job, queued = job_and_queue
    for node in range(8):
        client.get(url(job, node))
    AttentionMap.objects.update(created_at=AttentionMap.objects.first().created_at
                                - timedelta(seconds=LIMITS["attention"].window_s + 1))
    assert client.get(url(job, 8)).status_code == 202


def test_one_browser_session_queues_a_limited_number_a_minute(client, job_and_queue, monkeypatch):
    job, queued = job_and_queue
    monkeypatch.setattr(attention_limits, "PER_SESSION_PER_WINDOW", 3)
    for node in range(3):
        assert client.get(url(job, node)).status_code == 202
    refused = client.get(url(job, 4))
    assert refused.status_code == 429 and 1 <= int(refused["Retry-After"]) <= 61
    assert "This browser has asked for 3 new attention maps in the last minute" in refused.json()["error"]
    assert Client().get(url(job, 4)).status_code == 202  # another session has its own allowance
    session = client.session
    start, count = session[attention_limits.SESSION_KEY]
    session[attention_limits.SESSION_KEY] = [start - attention_limits.SESSION_WINDOW_S, count]
    session.save()
    assert client.get(url(job, 5)).status_code == 202  # a new minute
    assert queued == [0, 1, 2, 4, 5]
