"""The JSON API (docs/api.md): every endpoint, its auth and its error paths."""

import uuid

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.authtoken.models import Token

from analysis.evaluator import MaterialEvaluator
from webapp.jobs.models import AnalysisJob
from webapp.jobs.run.runner import JobRun

GAME = "1. e4 e5 2. Nf3 *"


@pytest.fixture
def token(db):
    return Token.objects.create(user=User.objects.create_user("scripter", password="pw")).key


@pytest.fixture
def queued(monkeypatch):
    sent = []
    monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: sent.append(k))
    return sent


def submit(client, data, token=None, **extra):
    headers = {"HTTP_AUTHORIZATION": f"Token {token}"} if token else {}
    return client.post("/api/jobs/", data, content_type="application/json", **headers, **extra)


def test_submit_with_a_token(client, material_network, token, queued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = submit(client, {"pgn": GAME, "network": "material", "search": "value"}, token)
    assert response.status_code == 201, response.content
    body = response.json()
    job = AnalysisJob.objects.get(pk=body["id"])
    assert job.total_positions == 4 and body["status"] == "queued" and len(queued) == 1
    assert body["page"].endswith(f"/jobs/{job.id}/") and response["Location"] == body["api"]
    assert client.get(body["api"]).json()["id"] == str(job.id)


def test_submit_a_fen_with_a_json_number_budget(client, material_network, token, queued):
    fen = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"
    response = submit(client, {"fen": fen, "network": "material", "search": "alphabeta", "budget": 2}, token)
    assert response.status_code == 201, response.content
    job = AnalysisJob.objects.get(pk=response.json()["id"])
    assert job.budget == 2 and job.start_fen == fen and response.json()["title"] == "Position, move 1, White to move, White up 2"


def test_submit_without_credentials_is_refused(client, material_network):
    response = submit(client, {"pgn": GAME, "network": "material", "search": "value"})
    assert response.status_code == 401 and "credentials" in response.json()["error"]
    response = submit(client, {"pgn": GAME}, token="not-a-token")
    assert response.status_code == 401 and "token" in response.json()["error"].lower()
    assert AnalysisJob.objects.count() == 0


def test_a_session_needs_the_csrf_token(material_network, queued):
    User.objects.create_user("browser", password="pw")
    client = Client(enforce_csrf_checks=True)
    client.login(username="browser", password="pw")
    data = {"pgn": GAME, "network": "material", "search": "value"}
    refused = submit(client, data)
    assert refused.status_code == 403 and "CSRF" in refused.json()["error"]
    client.get("/")  # the page sets the csrftoken cookie, as a browser would get it
    accepted = submit(client, data, HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value)
    assert accepted.status_code == 201, accepted.content


# 400: the body breaks the schema; 422: it keeps the schema, but is not a game the site can analyse as asked.
@pytest.mark.parametrize("data, status, fragment", [
    ({"pgn": "1. e4 e5 2. Ke3 *"}, 422, "Ply 3 (2. Ke3): illegal move"),
    ({"fen": "8/8/8/8/8/8/8/8 w - - 0 1"}, 422, "FEN"),
    ({}, 400, "Give exactly one of pgn"),
    ({"pgn": GAME, "fen": "8/8/8/8/8/8/8/K1k5 w - - 0 1"}, 400, "Give exactly one of pgn"),
    ({"pgn": GAME, "network": "nope"}, 422, "Unknown network 'nope'"),
    ({"pgn": GAME, "search": "mcts", "budget": 10**9}, 400, "less than or equal to 20000"),
    ({"pgn": GAME, "search": "alphabeta", "budget": 7}, 422, "out of range for alphabeta"),
    ({"pgn": "x" * 1_000_001}, 400, "the limit is 1 MB"),  # over the schema's maxLength (characters)
])
def test_submit_errors_say_what_is_wrong(client, material_network, token, data, status, fragment):
    payload = {"network": "material", "search": "value", **data}
    response = submit(client, payload, token)
    assert response.status_code == status, response.content[:300]
    assert fragment in response.json()["error"] and response.json()["errors"]
    assert AnalysisJob.objects.count() == 0


def test_submit_several_games_lists_them(client, material_network, token):
    two = '[White "A"]\n\n1. e4 *\n\n[White "B"]\n\n1. d4 *\n'
    response = submit(client, {"pgn": two, "network": "material", "search": "value"}, token)
    assert response.status_code == 422 and [g["index"] for g in response.json()["games"]] == [0, 1]


def test_submit_malformed_json(client, material_network, token):
    response = client.post("/api/jobs/", "{not json", content_type="application/json",
                           HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 400 and "JSON parse error" in response.json()["error"]


@pytest.mark.django_db(transaction=True)
def test_submit_while_the_queue_is_down_is_503_and_saves_nothing(client, material_network, token, broker_down):
    response = submit(client, {"pgn": GAME, "network": "material", "search": "value"}, token)
    assert response.status_code == 503 and "unavailable" in response.json()["error"]
    assert response["Retry-After"] == "30" and AnalysisJob.objects.count() == 0


def test_read_a_position(client, material_network, token, queued):
    job_id = submit(client, {"pgn": GAME, "network": "material", "search": "value"}, token).json()["id"]
    JobRun(AnalysisJob.objects.get(pk=job_id), MaterialEvaluator(), lambda kind, payload: None).run()
    body = client.get(f"/api/jobs/{job_id}/nodes/2/").json()
    assert body["node"]["san"] == "e5" and "key" not in body["node"]
    assert body["results"]["eval"]["policy"] and body["results"]["judgement"]["played"] == "e7e5"
    assert body["eval"]["mate"] is None and isinstance(body["eval"]["cp"], int)


@pytest.mark.parametrize("path, status, fragment", [
    ("/api/jobs/{id}/nodes/99/", 404, "no position 99"),
    ("/api/jobs/{missing}/nodes/0/", 404, "No analysis has the id"),
    ("/api/jobs/{id}/nodes/0/attention/?layer=0", 404, "has no attention maps"),
    ("/api/jobs/{missing}/", 404, "No analysis has the id"),
])
def test_read_errors(client, material_network, token, queued, path, status, fragment):
    job_id = submit(client, {"pgn": GAME, "network": "material", "search": "value"}, token).json()["id"]
    response = client.get(path.format(id=job_id, missing=uuid.uuid4()))
    assert response.status_code == status and fragment in response.json()["error"]


def test_read_an_attention_layer(client, tiny_network, token, queued, monkeypatch):
    monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: None)
    job_id = submit(client, {"pgn": GAME, "network": tiny_network.name, "search": "policy"}, token).json()["id"]
    job = AnalysisJob.objects.get(pk=job_id)
    from webapp.networks.model_cache import ModelCache

    JobRun(job, ModelCache().get(tiny_network), lambda kind, payload: None).run()
    assert client.get(f"/api/jobs/{job_id}/nodes/1/attention/?layer=0").status_code == 202
    bad = client.get(f"/api/jobs/{job_id}/nodes/1/attention/?layer=x")
    assert bad.status_code == 400 and bad.json()["error"] == "layer must be a number."
