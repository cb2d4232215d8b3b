"""The lens on a job's position through the API (issue 28, items 10-11): checked before anything
is queued, computed by the worker's task, cached per (network, position, request)."""

from __future__ import annotations

import uuid

import chess
import pytest

from analysis.pov import score_for_white
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.models import LensResult
from webapp.lens.tasks import compute_lens
from webapp.networks.models import Network

GAME = "1. e4 e5 2. Nf3 *"


@pytest.fixture
def sent(monkeypatch):
    tasks = []
    monkeypatch.setattr("workers.dispatch.send_task", lambda name, args, queue, task_id=None: tasks.append((name, args)))
    return tasks


@pytest.fixture
def job(tiny_network):
    return create_job(parse_pgn(GAME), tiny_network, "policy", 1, dispatch=False)


def lens_url(job, node, quantity, query=""):
    return f"/api/jobs/{job.id}/nodes/{node}/lens/{quantity}/{query}"


def run_sent(sent):
    """What the worker does with each task sent so far."""
    for name, args in sent:
        assert name == "sightline.compute_lens"
        assert compute_lens(*args) == "ready"
    sent.clear()


def test_the_logit_lens_is_pending_then_ready(client, job, sent):
    url = lens_url(job, 1, "logit", "?moves=e7e5,g8f6")
    pending = client.get(url)
    assert pending.status_code == 202 and pending.json() == {"status": "pending", "poll": url}
    assert pending["Retry-After"] == "1" and len(sent) == 1
    assert client.get(url).status_code == 202 and len(sent) == 1  # asked again: queued once
    run_sent(sent)
    body = client.get(url).json()
    assert body["request"] == {"quantity": "lens", "moves": ["e7e5", "g8f6"]}
    assert set(body["curves"]) == {"e7e5", "g8f6"} and len(body["top"]) == len(body["readouts"])
    assert all(len(curve) == len(body["readouts"]) for curve in body["curves"].values())
    stored = LensResult.objects.get().data
    assert body["score"] == [score_for_white(s, False) for s in stored["score"]]  # Black to move at node 1


def test_ablating_a_head_redraws_the_policy(client, job, sent, tiny_network):
    url = lens_url(job, 0, "ablate", "?layer=0&index=1&scale=0")
    assert client.get(url).status_code == 202
    run_sent(sent)
    body = client.get(url).json()
    moves = {row["uci"] for row in body["policy"]}
    assert moves == {m.uci() for m in chess.Board().legal_moves}
    changes = [row["scaled"] - row["clean"] for row in body["policy"]]
    assert changes == sorted(changes, reverse=True) and max(map(abs, changes)) > 0
    assert client.get(lens_url(job, 0, "ablate", "?layer=0&index=1&scale=1")).status_code == 202
    run_sent(sent)
    clean = client.get(lens_url(job, 0, "ablate", "?layer=0&index=1&scale=1")).json()
    assert all(abs(row["scaled"] - row["clean"]) < 1e-5 for row in clean["policy"])


def test_the_head_grid(client, job, sent, tiny_network):
    layers, heads = tiny_network.caps.attention
    url = lens_url(job, 0, "grid", "?move=e2e4")
    assert client.get(url).status_code == 202
    run_sent(sent)
    body = client.get(url).json()
    assert len(body["logit"]) == layers and all(len(row) == heads for row in body["logit"])
    assert all(all(row) for row in body["exact"]) and body["move"] == "e2e4"


@pytest.mark.parametrize("quantity, query, status, fragment", [
    ("ablate", "?layer=9&index=0", 422, "layer 9 is out of range"),  # well-formed, not this network's
    ("ablate", "?layer=0&index=99", 422, "head 99 is out of range"),
    ("ablate", "?layer=0&index=0&scale=4.5", 400, "outside [-4, 4]"),  # the schema's bounds
    ("ablate", "?layer=0&index=0&scale=nan", 400, "finite"),
    ("ablate", "?layer=x&index=0", 400, "layer must be a whole number"),
    ("ablate", "?index=0", 400, "layer is required"),
    ("ablate", "?unit=channel&layer=0&index=0", 422, "no 'channel' units"),
    ("grid", "?move=e2e5", 422, "not a legal move"),
    ("grid", "?move=a1a1", 422, "not a legal move"),  # the shape of a UCI move, but none
    ("grid", "?move=zz", 400, "not a UCI move"),
    ("logit", "?moves=a2a3,b2b3,c2c3,d2d3,e2e3", 400, "at most 4"),
])
def test_bad_input_is_one_refusal_and_nothing_is_stored(client, job, sent, quantity, query, status, fragment):
    response = client.get(lens_url(job, 0, quantity, query))
    assert response.status_code == status and fragment.lower() in response.json()["error"].lower(), response.json()
    assert LensResult.objects.count() == 0 and sent == []


def test_a_network_without_a_lens_says_why(client, material_network, sent):
    job = create_job(parse_pgn(GAME), material_network, "value", 1, dispatch=False)
    response = client.get(lens_url(job, 0, "logit"))
    assert response.status_code == 422 and "not a network" in response.json()["error"]
    about = client.get(f"/api/jobs/{job.id}/nodes/0/lens/").json()
    assert "not a network" in about["unavailable"]["lens"] and LensResult.objects.count() == 0


def test_a_job_you_may_not_see_is_refused_as_the_job_is(client, job, sent):
    missing = uuid.uuid4()
    for quantity in ("logit", "ablate", "grid"):
        lens = client.get(f"/api/jobs/{missing}/nodes/0/lens/{quantity}/?layer=0&index=0&move=e2e4")
        plain = client.get(f"/api/jobs/{missing}/")
        assert lens.status_code == plain.status_code == 404 and lens.json() == plain.json()
    assert client.get(lens_url(job, 99, "logit")).status_code == 404 and sent == []


def test_while_redis_is_down_503_and_nothing_pending(client, job, broker_down):
    response = client.get(lens_url(job, 0, "grid", "?move=e2e4"))
    assert response.status_code == 503 and response["Retry-After"] == "30"
    assert "queue cannot be reached" in response.json()["error"] and LensResult.objects.count() == 0


def test_a_failed_computation_is_503_and_retry_queues_it_again(client, job, sent, monkeypatch):
    url = lens_url(job, 0, "logit")
    client.get(url)
    monkeypatch.setattr("webapp.lens.tasks.lens_answer", lambda *a: 1 / 0)
    (name, args), = sent
    assert compute_lens(*args) == "failed"
    failed = client.get(url)
    assert failed.status_code == 503 and "ZeroDivisionError" in failed.json()["error"]
    assert client.get(url + "?retry=1").status_code == 202 and len(sent) == 2


def test_the_lens_task_has_the_shared_network_to_itself(tiny_network):
    """The lens hooks the network: while a lens call holds it, another thread's evaluation waits."""
    import threading

    from webapp.networks.model_cache import ModelCache

    batcher, done = ModelCache().get(tiny_network), threading.Event()
    worker = threading.Thread(target=lambda: (batcher.evaluate([chess.Board()]), done.set()))
    with batcher.exclusive() as evaluator:
        assert evaluator is batcher.inner
        worker.start()
        assert not done.wait(0.5)
    assert done.wait(30)
    worker.join()


def test_the_task_on_a_withdrawn_entry_does_nothing(job):
    assert compute_lens(str(job.id), 0, 12345) == "missing"


def test_lens_answers_are_turned_to_whites_view():
    from webapp.jobs.live.messages import lens_for_white

    lens = {"readouts": ["embed", "0.mlp"], "score": [0.3, 0.8], "wdl": [[0.1, 0.5, 0.4], [0.7, 0.2, 0.1]]}
    assert lens_for_white(lens, True) == lens
    black = lens_for_white(lens, False)
    assert black["score"] == pytest.approx([0.7, 0.2]) and black["wdl"] == [[0.4, 0.5, 0.1], [0.1, 0.2, 0.7]]
    ablated = lens_for_white({"policy": [], "clean_score": 0.6, "scaled_score": 0.25}, False)
    assert ablated["clean_score"] == pytest.approx(0.4) and ablated["scaled_score"] == pytest.approx(0.75)
    grid = {"logit": [[0.5]], "exact": [[True]], "score": [[-0.1, None]], "clean_score": 0.9}
    assert lens_for_white(grid, False)["score"] == [[0.1, None]] and lens_for_white(grid, True)["score"] == [[-0.1, None]]
    assert lens_for_white(grid, False)["logit"] == [[0.5]]  # a move's logit has no point of view


def test_the_web_process_never_loads_a_checkpoint_to_describe_the_lens(client, job, sent, monkeypatch):
    """The description is read from the network's row (stored when it was checked): neither the
    checkpoint loader nor the worker's model cache is touched by the views."""
    def refuse(*args, **kwargs):
        raise AssertionError("the web process loaded a checkpoint")

    monkeypatch.setattr("analysis.checkpoint.load_evaluator", refuse)
    monkeypatch.setattr("analysis.checkpoint.load_checkpoint", refuse)
    monkeypatch.setattr("webapp.networks.model_cache.models.get", refuse)
    about = client.get(f"/api/jobs/{job.id}/nodes/0/lens/")
    assert about.status_code == 200 and about.json()["units"]["head"]["layers"] >= 1
    assert client.get(lens_url(job, 0, "ablate", "?layer=0&index=0")).status_code == 202
    assert client.get(lens_url(job, 0, "ablate", "?layer=99&index=0")).status_code == 422


def test_a_network_whose_lens_was_never_described_says_so(client, job, sent, tiny_network, monkeypatch):
    """A row registered before descriptions were stored, whose file the migration could not read:
    refused with the reason (a 422, not a 500), nothing loaded, stored or queued."""
    monkeypatch.setattr("analysis.checkpoint.load_evaluator", lambda *a, **k: (_ for _ in ()).throw(OSError("gone")))
    Network.objects.filter(pk=tiny_network.pk).update(lens_description={})
    response = client.get(lens_url(job, 0, "logit"))
    assert response.status_code == 422 and "not been described" in response.json()["error"]
    about = client.get(f"/api/jobs/{job.id}/nodes/0/lens/").json()
    assert "not been described" in about["unavailable"]["lens"]
    assert LensResult.objects.count() == 0 and sent == []


def test_a_network_s_description_is_stored_when_it_is_checked(tiny_network):
    from analysis.checkpoint import load_evaluator
    from analysis.lens import lens_for
    from analysis.lens.description import describe_adapter

    evaluator = load_evaluator(tiny_network.path, "cpu")
    assert tiny_network.lens_description == describe_adapter(lens_for(evaluator.model, evaluator.encoding)).to_json()


def test_a_client_queues_a_bounded_cost_of_lens_computations(client, job, sent, monkeypatch):
    from dataclasses import replace

    from django.test import Client

    from webapp.lens import views
    from webapp.lens.costs import QUANTITY_UNITS

    limit = views.LENS.limit
    monkeypatch.setattr(views, "LENS", replace(views.LENS, limit=replace(limit, per_client_s=limit.cost(
        12 * QUANTITY_UNITS))))  # twelve quantities' worth
    for head in range(12):
        assert client.get(lens_url(job, 0, "ablate", f"?layer=0&index=0&scale={head / 4}")).status_code == 202
    refused = client.get(lens_url(job, 0, "ablate", "?layer=0&index=1"))
    assert refused.status_code == 429 and 1 <= int(refused["Retry-After"]) <= 600
    assert "each visitor may queue" in refused.json()["error"]
    assert client.get(lens_url(job, 0, "ablate", "?layer=0&index=0&scale=0")).status_code == 202  # known: served
    assert Client(REMOTE_ADDR="10.0.0.2").get(lens_url(job, 0, "ablate", "?layer=0&index=2")).status_code == 202
    run_sent(sent)
    assert client.get(lens_url(job, 0, "ablate", "?layer=0&index=1")).status_code == 202


def test_networks_registered_before_descriptions_were_stored_get_theirs_from_the_migration(tiny_network):
    """The data migration describes each ready checkpoint from its file (outside the web process);
    a file it cannot read is left undescribed, for the next check."""
    import importlib

    from django.apps import apps

    migration = importlib.import_module("webapp.networks.migrations.0006_network_lens_description")
    described = tiny_network.lens_description
    Network.objects.filter(pk=tiny_network.pk).update(lens_description={})
    migration.describe_registered(apps, None)
    assert Network.objects.get(pk=tiny_network.pk).lens_description == described
    Network.objects.filter(pk=tiny_network.pk).update(lens_description={}, file="missing.safetensors")
    migration.describe_registered(apps, None)
    assert Network.objects.get(pk=tiny_network.pk).lens_description == {}


def test_the_lens_answers_the_position_s_legal_moves_in_uci_and_san(client, job, sent):
    """The page labels moves in SAN and never asks one that is illegal at the shown position (issue 37)."""
    about = client.get(f"/api/jobs/{job.id}/nodes/1/lens/").json()  # after 1. e4
    board = chess.Board()
    board.push_uci("e2e4")
    assert about["moves"] == [{"uci": m.uci(), "san": board.san(m)} for m in board.legal_moves]
    assert {"uci": "g8f6", "san": "Nf6"} in about["moves"] and len(about["moves"]) == 20
    assert sent == []  # nothing is queued to answer it


def test_a_mated_position_has_no_moves_to_choose(client, tiny_network, sent):
    mated = create_job(parse_pgn("1. f3 e5 2. g4 Qh4# 0-1"), tiny_network, "policy", 1, dispatch=False)
    assert client.get(f"/api/jobs/{mated.id}/nodes/4/lens/").json()["moves"] == []
    assert len(client.get(f"/api/jobs/{mated.id}/nodes/3/lens/").json()["moves"]) > 0
