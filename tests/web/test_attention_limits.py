"""Attention computations a client can queue are limited by their cost (webapp.ondemand.limits) and per browser
session (webapp.lens.attention_limits)."""

from dataclasses import replace
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from tests.web.conftest import SHORT_GAME
from webapp.lens import attention_limits
from webapp.ondemand.limits import LIMITS
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.models import AttentionMap
from webapp.lens import tasks, views
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


@pytest.fixture
def eight_maps_each(monkeypatch):
    """A client may have eight maps' worth pending (the site forty)."""
    limit = LIMITS["attention"]
    monkeypatch.setattr(views, "ATTENTION", replace(views.ATTENTION, limit=replace(
        limit, per_client_s=limit.cost(8), per_site_s=limit.cost(40))))


def test_one_client_has_at_most_eight_maps_worth_queued_and_another_is_not_held(client, job_and_queue,
                                                                                eight_maps_each):
    job, queued = job_and_queue
    client.session  # a browser with its session from the start (the first map stores one): one client throughout
    for node in range(8):
        assert client.get(url(job, node)).status_code == 202
    refused = client.get(url(job, 8))
    assert refused.status_code == 429 and 1 <= int(refused["Retry-After"]) <= 600
    assert "You have attention maps queued worth about 1 s of work" in refused.json()["error"]
    assert Client(REMOTE_ADDR="10.0.0.2").get(url(job, 8)).status_code == 202  # another client, its own limit
    assert queued == list(range(9)) and AttentionMap.objects.count() == 9
    assert client.get(url(job, 3)).status_code == 202  # asking again for queued work is not new work
    assert tasks.compute_attention.run(str(job.id), 3) == "ready"
    assert client.get(url(job, 7)).status_code == 202 and client.get(url(job, 0)).status_code == 202


def test_a_computation_whose_worker_was_lost_stops_counting(client, job_and_queue, eight_maps_each):
    job, queued = job_and_queue
    for node in range(8):
        client.get(url(job, node))
    AttentionMap.objects.update(lease_owner="dead", lease_until=timezone.now() - timedelta(seconds=1))
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
