""""Go deeper" with Stockfish (issue 37): checked requests, limits per client and on the site, a
worker's run with live depth, nodes and MultiPV lines (White's view), its bounds, and Stop."""

from __future__ import annotations

import json
import time

import pytest
from django.conf import settings
from django.test import Client

from tests.conftest import require_stockfish
from tests.web.conftest import SHORT_GAME
from webapp.jobs import engine_deeper
from webapp.jobs.engine_deeper import LIMITS, EngineDeeperLimits
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.models import DeepSearch
from webapp.jobs.run import engine_deeper_runner

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def queued(monkeypatch):
    """The searches handed to the broker: (task, id, queue) each."""
    sent = []
    monkeypatch.setattr("workers.dispatch.send_task", lambda name, args, queue: sent.append((name, args[0], queue)))
    return sent


@pytest.fixture
def job(material_network):
    return create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False)


def post(client, url, body=None):
    response = client.post(url, json.dumps(body) if body is not None else "", content_type="application/json")
    return response.status_code, response.json(), response


@pytest.mark.parametrize("body, status, words", [
    ({"node": 42, "lines": 3, "budget": 1_000_000}, 404, "no position 42"),
    ({"lines": 3, "budget": 1_000_000}, 400, "node is required"),
    ({"node": None, "lines": 3, "budget": 1_000_000}, 400, "node is required"),
    ({"node": "1", "lines": 3, "budget": 1_000_000}, 400, "node must be a whole number"),
    ({"node": 1.5, "lines": 3, "budget": 1_000_000}, 400, "node must be a whole number"),
    ({"node": 0, "lines": 0, "budget": 1_000_000}, 400, "lines must be"),
    ({"node": 0, "lines": 6, "budget": 1_000_000}, 400, "lines must be"),
    ({"node": 0, "lines": "3", "budget": 1_000_000}, 400, "lines must be"),
    ({"node": 0, "lines": 3, "budget": 10}, 400, "budget must be"),
    ({"node": 0, "lines": 3, "budget": 10**9}, 400, "budget must be"),
    ({"node": 0, "lines": 3, "budget": "lots"}, 400, "budget must be"),
    ([1, 2], 400, "must be a JSON object"),
])
def test_refused_requests_start_nothing(client, job, queued, body, status, words):
    got, answer, _ = post(client, f"/jobs/{job.id}/engine/", body)
    assert got == status and words in answer["error"], answer
    assert not DeepSearch.objects.exists() and not queued


def test_viewers_may_start_it_one_at_a_time_each_and_stop_only_their_own(job, queued):
    viewer, other = Client(), Client()  # neither owns the job (a shared game's visitors)
    status, started, _ = post(viewer, f"/jobs/{job.id}/engine/", {"node": 1, "lines": 3, "budget": "until-stopped"})
    assert status == 202 and started["budget"] == 0 and started["lines"] == 3
    assert queued == [("sightline.engine_deeper", started["deep"], "ondemand")]  # the on-demand lane
    assert post(viewer, f"/jobs/{job.id}/engine/", {"node": 2, "lines": 1, "budget": 1_000_000})[:2] == \
        (409, {"error": "Your deeper engine is already running: stop it first."})
    assert post(other, f"/jobs/{job.id}/engine/", {"node": 2, "lines": 1, "budget": 1_000_000})[0] == 202
    assert post(other, started["stop"])[0] == 403
    assert post(viewer, started["stop"])[:2] == (200, {"status": "stopping"})
    assert post(viewer, f"/jobs/{job.id}/engine/999/stop/")[0] == 404
    DeepSearch.objects.filter(pk=started["deep"]).update(status="done")
    assert post(viewer, started["stop"])[0] == 409
    # The job's search keeps its own "one at a time": a running engine does not block it, nor the reverse.
    assert not DeepSearch.objects.filter(engine="").exists()


def test_each_client_and_the_site_are_bounded(job, monkeypatch):
    """An hourly count per client, and the site's pending cost: two searches until stopped (each
    counts the longest it may run)."""
    from dataclasses import replace

    monkeypatch.setattr(engine_deeper, "LIMITS", EngineDeeperLimits(per_client_per_hour=2))
    monkeypatch.setitem(engine_deeper.FAIR_USE, "engine", replace(engine_deeper.FAIR_USE["engine"],
                                                                  per_site_s=2 * engine_deeper.LIMITS.max_seconds))
    viewer = Client()
    for _ in range(2):
        status, started, _ = post(viewer, f"/jobs/{job.id}/engine/", {"node": 0, "lines": 1, "budget": 1_000_000})
        assert status == 202
        DeepSearch.objects.filter(pk=started["deep"]).update(status="done")
    status, answer, response = post(viewer, f"/jobs/{job.id}/engine/", {"node": 0, "lines": 1, "budget": 1_000_000})
    assert status == 429 and "times an hour" in answer["error"] and int(response["Retry-After"]) > 0
    until_stopped = {"node": 0, "lines": 1, "budget": "until-stopped"}
    assert post(Client(), f"/jobs/{job.id}/engine/", until_stopped)[0] == 202
    assert post(Client(), f"/jobs/{job.id}/engine/", until_stopped)[0] == 202
    status, answer, response = post(Client(), f"/jobs/{job.id}/engine/", until_stopped)
    assert status == 429 and "The site has deeper engine searches queued worth about 120 s of work" in answer["error"]
    # The room it needs frees when the first search ends: its 60 s, shared by the on-demand slots.
    assert int(response["Retry-After"]) == -(-engine_deeper.LIMITS.max_seconds // settings.SIGHTLINE_ONDEMAND_SLOTS)


def test_a_broker_outage_is_a_503_with_nothing_left(job, monkeypatch):
    from workers.dispatch import BrokerUnavailable

    def down(*args, **kwargs):
        raise BrokerUnavailable("redis://nowhere")

    monkeypatch.setattr("workers.dispatch.send_task", down)
    status, answer, response = post(Client(), f"/jobs/{job.id}/engine/", {"node": 0, "lines": 2, "budget": 1_000_000})
    assert status == 503 and response["Retry-After"] and not DeepSearch.objects.exists()


def run(deep, on_message=lambda kind, payload: None):
    messages = []

    def publish(kind, payload):
        messages.append((kind, payload))
        on_message(kind, payload)

    return engine_deeper_runner.run_engine_deeper(deep.pk, publish), messages


def test_a_worker_runs_stockfish_with_live_lines(job, monkeypatch):
    require_stockfish()
    monkeypatch.setattr(engine_deeper_runner, "STOP_POLL_S", 0.05)
    deep = engine_deeper.start(job, "viewer", 1, 3, 300_000)  # after 1. e4: Black to move
    status, messages = run(deep)
    assert status == "done"
    sent = [payload for kind, payload in messages if kind == "engine_deep"]
    assert len(sent) >= 2 and sent[-1]["final"] and sent[-1]["status"] == "done" and not sent[-1]["stopped"]
    depths = [m["depth"] for m in sent]
    assert depths == sorted(depths) and depths[-1] > depths[0]
    final = sent[-1]
    assert final["engine"].startswith("Stockfish") and len(final["lines"]) == 3 and final["nodes"] >= 300_000 * 0.9
    assert [line["rank"] for line in final["lines"]] == [1, 2, 3]
    assert len({line["pv"][0] for line in final["lines"]}) == 3 and all(line["pv_san"] for line in final["lines"])
    stored = DeepSearch.objects.get(pk=deep.pk).result  # Black's view, sent as White's
    assert [line["cp"] for line in stored["lines"]] == [-line["cp"] for line in final["lines"]]
    assert final["lines"][0]["win"] == round(100 * final["lines"][0]["score"], 1)


def test_until_stopped_ends_at_stop_and_at_the_time_limit(job, monkeypatch):
    require_stockfish()
    deep = engine_deeper.start(job, "viewer", 0, 2, "until-stopped")

    def stop_when_deep(kind, payload):
        if payload.get("depth", 0) >= 8:
            DeepSearch.objects.filter(pk=deep.pk).update(status="stopping")

    t0 = time.monotonic()
    status, messages = run(deep, stop_when_deep)
    assert status == "done" and time.monotonic() - t0 < LIMITS.max_seconds / 2
    assert messages[-1][1]["stopped"] and messages[-1][1]["final"]
    monkeypatch.setattr(engine_deeper_runner, "LIMITS", EngineDeeperLimits(max_seconds=2))
    deep = engine_deeper.start(job, "other viewer", 0, 1, "until-stopped")
    t0 = time.monotonic()
    status, messages = run(deep)
    assert status == "done" and time.monotonic() - t0 < 10 and not messages[-1][1]["stopped"]
    assert messages[-1][1]["elapsed_s"] >= 1.5


def test_a_missing_engine_fails_with_a_sentence(job, settings, tmp_path):
    settings.SIGHTLINE_ENGINE_PATH = str(tmp_path / "no-stockfish")
    deep = engine_deeper.start(job, "viewer", 0, 1, 1_000_000)
    status, messages = run(deep)
    assert status == "failed" and messages[-1][1]["final"] and "could not be started" in messages[-1][1]["error"]
    assert DeepSearch.objects.get(pk=deep.pk).status == "failed"
