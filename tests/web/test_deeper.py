"""'Analyse this position deeper': checked requests, a worker's run with live MultiPV lines
(visits, prior, Q and WDL per move, White's view), and Stop."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from tests.web.conftest import SHORT_GAME
from webapp.jobs.run import deep_runner
from webapp.jobs import deeper
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.live.messages import deep_lines_for_white
from webapp.jobs.models import DeepSearch
from webapp.networks.model_cache import ModelCache
from workers.dispatch import send_task as real_send_task

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def queued(monkeypatch):
    """The deeper searches handed to the broker: (id, queue) each."""
    sent = []
    monkeypatch.setattr("workers.dispatch.send_task", lambda name, args, queue: sent.append((args[0], queue)))
    return sent


def owned(client, network, search="mcts", budget=16):
    job = create_job(parse_pgn(SHORT_GAME), network, search, budget, dispatch=False)
    session = client.session
    session["owned_jobs"] = [str(job.id)]
    session.save()
    return job


def post(client, url, body=None):
    response = client.post(url, json.dumps(body) if body is not None else "", content_type="application/json")
    return response.status_code, response.json()


@pytest.mark.parametrize("search, body, status, words", [
    ("policy", {"node": 0, "budget": 100}, 400, "no budget to raise"),
    ("mcts", {"node": 42, "budget": 100}, 404, "no position 42"),
    ("mcts", {"budget": 100}, 400, "node is required"),  # was a 404 "no position None"
    ("mcts", {"node": None, "budget": 100}, 400, "node is required"),
    ("mcts", {"node": "0", "budget": 100}, 400, "node must be a whole number"),
    ("mcts", {"node": True, "budget": 100}, 400, "node must be a whole number"),
    ("mcts", {"node": [0], "budget": 100}, 400, "node must be a whole number"),
    ("mcts", {"node": 0, "budget": 0}, 400, "budget must be"),
    ("mcts", {"node": 0, "budget": 20_001}, 400, "budget must be"),
    ("mcts", {"node": 0, "budget": "lots"}, 400, "budget must be"),
    ("alphabeta", {"node": 0, "budget": "until-stopped"}, 400, "searches to a depth"),
])
def test_refused_requests_start_nothing(client, material_network, search, body, status, words):
    job = owned(client, material_network, search, 2 if search == "alphabeta" else 16)
    got, answer = post(client, f"/jobs/{job.id}/deeper/", body)
    assert got == status and words in answer["error"], answer
    assert not DeepSearch.objects.exists()


def test_owner_only_one_at_a_time_and_stop(client, material_network, queued):
    job = owned(client, material_network)
    assert post(Client(), f"/jobs/{job.id}/deeper/", {"node": 0, "budget": 100})[0] == 403
    status, started = post(client, f"/jobs/{job.id}/deeper/", {"node": 0, "budget": "until-stopped"})
    assert status == 202 and started["budget"] == 0 and queued == [(started["deep"], "ondemand")]  # the on-demand lane
    assert post(client, f"/jobs/{job.id}/deeper/", {"node": 1, "budget": 100}) == \
        (409, {"error": "A deeper search of this analysis is already running: stop it first."})
    assert post(Client(), started["stop"])[0] == 403
    assert post(client, started["stop"]) == (200, {"status": "stopping"})
    assert post(client, f"/jobs/{job.id}/deeper/999/stop/")[0] == 404
    DeepSearch.objects.update(status="done")
    assert post(client, started["stop"])[0] == 409


def test_a_worker_runs_it_and_publishes_lines(client, tiny_network, monkeypatch):
    monkeypatch.setattr(deep_runner, "PUBLISH_EVERY_S", 0.0)
    job = owned(client, tiny_network, "mcts", 16)
    deep = deeper.start(job, 1, 160)  # after 1. e4: Black to move
    messages = []
    status = deep_runner.run_deep_search(deep.pk, ModelCache().get(tiny_network), lambda kind, payload: messages.append((kind, payload)))
    assert status == "done"
    final = messages[-1][1]
    assert messages[-1][0] == "deep" and final["final"] and final["node"] == 1 and final["nodes"] >= 160
    assert any(not p.get("final") for _, p in messages)  # live progress before the end
    lines = final["lines"]
    assert 1 < len(lines) <= deep_runner.LINES and sum(line["visits"] for line in lines) <= final["nodes"]
    for line in lines:
        assert line["san"] == line["pv_san"][0] and 0 <= line["prior"] <= 1
        if line["visits"]:
            assert sum(line["wdl"]) == pytest.approx(1, abs=1e-3)
            # White's view on Black's move: Q is White's expected score, as is W + D/2 of the WDL
            assert line["q"] == pytest.approx(line["wdl"][0] + line["wdl"][1] / 2, abs=2e-3)
    # Stored for the side to move (Black here), as every result; sent as White's.
    stored = DeepSearch.objects.get(pk=deep.pk).result
    assert deep_lines_for_white(stored, white=False) == {k: v for k, v in final.items()
                                                         if k not in ("deep", "node", "budget", "status", "stopped", "final")}


def test_until_stopped_ends_at_stop(client, tiny_network, monkeypatch):
    monkeypatch.setattr(deep_runner, "PUBLISH_EVERY_S", 0.0)
    monkeypatch.setattr(deep_runner, "STOP_POLL_S", 0.0)
    monkeypatch.setattr(deeper, "MAX_SECONDS", 60)
    job = owned(client, tiny_network, "mcts", 16)
    deep = deeper.start(job, 0, "until-stopped")
    messages = []

    def publish(kind, payload):
        messages.append(payload)
        if len(messages) == 3:
            deeper.stop(DeepSearch.objects.get(pk=deep.pk))

    assert deep_runner.run_deep_search(deep.pk, ModelCache().get(tiny_network), publish) == "done"
    assert messages[-1]["final"] and messages[-1]["stopped"] and len(messages) < 50


def test_a_broker_outage_is_a_503_and_a_lost_worker_does_not_block_for_ever(client, material_network, monkeypatch,
                                                                           broker_down):
    from datetime import timedelta

    from django.utils import timezone

    job = owned(client, material_network)
    monkeypatch.setattr("workers.dispatch.send_task", real_send_task)  # to the broker that is down
    status, answer = post(client, f"/jobs/{job.id}/deeper/", {"node": 0, "budget": 100})
    assert status == 503 and "queue cannot be reached" in answer["error"]
    assert not DeepSearch.objects.exists()  # nothing left queued without a task
    monkeypatch.setattr("workers.dispatch.send_task", lambda name, args, queue: None)
    # A run whose worker died stays "running"; past the longest a search may run, it no longer blocks.
    DeepSearch.objects.create(job=job, node_id=0, budget=100, status="running")
    assert post(client, f"/jobs/{job.id}/deeper/", {"node": 0, "budget": 100})[0] == 409
    DeepSearch.objects.filter(status="running").update(
        created_at=timezone.now() - timedelta(seconds=deeper.MAX_SECONDS + 120))
    assert post(client, f"/jobs/{job.id}/deeper/", {"node": 0, "budget": 100})[0] == 202
