"""Schema-driven fuzzing of the JSON API (issue 31): schemathesis walks every operation of the
schema the site serves at /api/schema/ with its examples, boundary values (its coverage phase)
and generated valid and invalid inputs, then holds each answer to the schema with every check
schemathesis has (issue 41): no 5xx, a documented status, a body of the documented shape, invalid
input refused, valid input accepted (a 422, well-formed but not for this job, counts as accepted).

The requests run in-process through Django's WSGI handler, against a database holding a
finished job and a job whose network has attention maps (their ids are given to the fuzzer as
the schema's examples). Jobs it submits are sent through the real Celery dispatch to an
in-memory broker, so an accepted job needs no Redis and its dispatch is exercised. Hypothesis
draws ``MAX_EXAMPLES`` per operation with no deadline: the module takes about 1.2 CPU-minutes
(run with -s, it prints how many requests the fuzz sent and their statuses).
"""

from __future__ import annotations

import copy
import json
import uuid
from collections import Counter

import numpy as np
import pytest
import schemathesis
from django.contrib.auth.models import User
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token

from tests.web.conftest import SHORT_GAME

DONE_JOB = uuid.UUID("5b0e6a1e-0000-4000-8000-000000000001")
ATTENTION_JOB = uuid.UUID("5b0e6a1e-0000-4000-8000-000000000002")
MAX_EXAMPLES = 40
# The site answers 400 for a request that breaks the schema and 422 for one that keeps it but does
# not fit the job (a layer its network lacks, an unreadable PGN): valid data may get a 422.
POSITIVE_STATUSES = ["2xx", "3xx", "401", "403", "404", "409", "422", "429", "5xx"]
REQUESTS: Counter[int] = Counter()  # the statuses answered, for the figures the module prints


class KeptConnectionWSGIApp(WSGIHandler):
    """Django's WSGI handler keeping the test's database connection open across requests
    (as Django's own test client does), so the rows the fixture made stay visible."""

    def __call__(self, environ, start_response):
        def counted(status, headers, *rest):
            REQUESTS[int(status.split()[0])] += 1
            return start_response(status, headers, *rest)

        request_started.disconnect(close_old_connections)
        request_finished.disconnect(close_old_connections)
        try:
            return super().__call__(environ, counted)
        finally:
            request_started.connect(close_old_connections)
            request_finished.connect(close_old_connections)


@pytest.fixture
def memory_broker():
    """The Celery app sends to kombu's in-memory transport: dispatch runs, no Redis needed."""
    from workers.celery_app import app

    saved = app.conf.broker_url
    app.conf.broker_url = "memory://"
    _drop_connections(app)
    yield app
    app.conf.broker_url = saved
    _drop_connections(app)


def _drop_connections(app) -> None:
    app._pool = None
    app.amqp._producer_pool = None


def _with_examples(document: dict) -> dict:
    """The served schema, with the fixture's job ids and positions as the examples of the path parameters."""
    document = copy.deepcopy(document)
    examples = {"job_id": {"done": {"value": str(DONE_JOB)}, "attention": {"value": str(ATTENTION_JOB)}},
                "node_id": {"root": {"value": 0}, "first": {"value": 1}, "second": {"value": 2}}}
    for operations in document["paths"].values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                if parameter["name"] in examples:
                    parameter["examples"] = examples[parameter["name"]]
    return document


def served_document() -> dict:
    """The schema /api/schema/ serves (test_the_schema_is_served checks that it is this one)."""
    from drf_spectacular.generators import SchemaGenerator

    return json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True)))


@pytest.fixture
def api_data(transactional_db, memory_broker, material_network, tiny_network) -> dict[str, str]:
    """The jobs the examples name, and the fuzzer's token (sent with every request)."""
    _make_jobs(material_network, tiny_network)
    token = Token.objects.create(user=User.objects.create_user("fuzzer", password="pw")).key
    return {"Authorization": f"Token {token}"}


def _make_jobs(material_network, tiny_network) -> None:
    """A finished material job with results, and a tiny-network job whose attention is ready at
    node 0 and not asked for elsewhere. (A map whose computation failed answers 503 by design,
    a worker's failure rather than the request's: tests/web/test_task.py covers it.)"""
    from analysis.evaluator import MaterialEvaluator
    from webapp.jobs.attention_maps import encode_maps
    from webapp.jobs.gameinput import parse_pgn
    from webapp.jobs.jobs import create_job
    from webapp.jobs.models import AnalysisJob, AttentionMap
    from webapp.jobs.run.runner import JobRun

    done = create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False)
    AnalysisJob.objects.filter(pk=done.pk).update(id=DONE_JOB)
    JobRun(AnalysisJob.objects.get(pk=DONE_JOB), MaterialEvaluator(), lambda kind, payload: None).run()
    attention = create_job(parse_pgn("1. e4 e5 *"), tiny_network, "policy", 1, dispatch=False)
    AnalysisJob.objects.filter(pk=attention.pk).update(id=ATTENTION_JOB)
    layers, heads = tiny_network.caps.attention
    maps = np.random.default_rng(0).random((layers, heads, 64, 64), dtype=np.float32)
    nodes = AnalysisJob.objects.get(pk=ATTENTION_JOB).nodes
    AttentionMap.objects.create(position_key=nodes[0]["key"], network_checksum=tiny_network.checksum,
                                status=AttentionMap.Status.READY, layers=layers, heads=heads, data=encode_maps(maps))


schema = schemathesis.openapi.from_dict(_with_examples(served_document()))
schema.config.generation.update(max_examples=MAX_EXAMPLES)
schema.config.checks.positive_data_acceptance.expected_statuses = POSITIVE_STATUSES
schema.app = KeptConnectionWSGIApp()


def test_the_schema_is_valid_openapi_without_warnings(tmp_path):
    from django.core.management import call_command

    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))
    assert (tmp_path / "schema.yaml").read_text().startswith("openapi: 3.")


def test_the_schema_is_served(client):
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200 and response.json() == served_document()
    assert client.get("/api/").json()["schema"] == "http://testserver/api/schema/"
    operations = {(path, method) for path, item in served_document()["paths"].items() for method in item}
    assert operations == {("/api/", "get"), ("/api/jobs/", "post"), ("/api/networks/", "get"),
                          ("/api/jobs/{job_id}/", "get"), ("/api/jobs/{job_id}/nodes/{node_id}/", "get"),
                          ("/api/jobs/{job_id}/review/", "get"), ("/api/jobs/{job_id}/export.pgn", "get"),
                          ("/api/jobs/{job_id}/nodes/{node_id}/board.svg", "get"),
                          ("/api/jobs/{job_id}/nodes/{node_id}/attention/", "get"),
                          ("/api/jobs/{job_id}/nodes/{node_id}/lc0/", "get"),
                          ("/api/jobs/{job_id}/nodes/{node_id}/lens/", "get"),
                          ("/api/jobs/{job_id}/nodes/{node_id}/lens/logit/", "get"),
                          ("/api/jobs/{job_id}/nodes/{node_id}/lens/ablate/", "get"),
                          ("/api/jobs/{job_id}/nodes/{node_id}/lens/grid/", "get"),
                          ("/api/jobs/{job_id}/nodes/{node_id}/lens/split/", "get"),
                          ("/api/jobs/{job_id}/nodes/{node_id}/lens/neurons/", "get"),
                          ("/api/jobs/{job_id}/nodes/{node_id}/lens/neuron/", "get"),
                          ("/api/jobs/{job_id}/nodes/{node_id}/lens/carriers/", "get"),
                          ("/api/jobs/{job_id}/nodes/{node_id}/lens/where-else/", "get"),
                          ("/api/jobs/{job_id}/nodes/{node_id}/lens/where-else/", "post"),
                          ("/api/studies/", "post"), ("/api/studies/{study_id}/", "get"),
                          ("/api/studies/{study_id}/items/", "get"), ("/api/studies/{study_id}/cancel/", "post"),
                          ("/api/studies/{study_id}/export.{kind}", "get"),
                          ("/api/studies/{study_id}/figures/{name}.{kind}", "get"),
                          ("/api/networks/{name}/concepts/", "get"), ("/api/networks/{name}/concepts/", "post"),
                          ("/api/networks/{name}/concepts/position/", "get"),
                          ("/api/networks/{name}/concepts/position/", "post")}


def test_an_accepted_submission_is_sent_to_the_in_memory_broker(transactional_db, memory_broker, material_network,
                                                                client):
    """What the fuzz's accepted submissions go through: the real dispatch, no Redis."""
    from webapp.jobs.models import AnalysisJob

    token = Token.objects.create(user=User.objects.create_user("sender", password="pw")).key
    response = client.post("/api/jobs/", {"pgn": SHORT_GAME, "network": "material", "search": "value"},
                           content_type="application/json", HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 201, response.content[:300]
    job = AnalysisJob.objects.get(pk=response.json()["id"])
    assert job.task_id == str(job.id)  # set once the broker took the task
    with memory_broker.connection_for_read() as connection:
        queue = connection.SimpleQueue(material_network.queue)
        sent = [(m.headers["task"], m.headers["id"]) for m in iter(lambda: _next_or_none(queue), None)]
    assert ("sightline.run_analysis", str(job.id)) in sent


def _next_or_none(queue):
    from queue import Empty

    try:
        return queue.get_nowait()
    except Empty:
        return None


@pytest.fixture(scope="module", autouse=True)
def request_figures():
    """Prints how many requests the fuzz sent and their statuses (run with -s to see them)."""
    yield
    print(f"\nschemathesis: {sum(REQUESTS.values())} requests, statuses {dict(sorted(REQUESTS.items()))}")


@schema.parametrize()
@settings(deadline=None, database=None, suppress_health_check=list(HealthCheck))
def test_every_api_operation_answers_within_its_schema(case, api_data):
    case.call_and_validate(headers=api_data)


DEEP = 5_000
# Inputs the probe and the issue name, sent as-is and held to the same schema checks.
HOSTILE_SUBMISSIONS = {
    "nested 5,000 deep": b'{"pgn": "1. e4 *", "network": "material", "x": ' + b"[" * DEEP + b"]" * DEEP + b"}",
    "nested at the top": b"[" * DEEP + b"]" * DEEP,
    "lone surrogate in pgn": b'{"pgn": "1. e4 \\ud800 *", "network": "material"}',
    "lone surrogate in network": b'{"pgn": "1. e4 *", "network": "\\udfff"}',
    "lone surrogate as a key": b'{"pgn": "1. e4 *", "network": "material", "\\ud800": 1}',
    "a 4,000-digit budget": b'{"pgn": "1. e4 *", "network": "material", "search": "mcts", "budget": 1'
                            + b"0" * 4000 + b"}",
    "a 5,000-digit budget": b'{"pgn": "1. e4 *", "network": "material", "budget": 1' + b"0" * 5000 + b"}",
    "an overflowing float": b'{"pgn": "1. e4 *", "network": "material", "budget": 1e400}',
    "NaN": b'{"pgn": "1. e4 *", "network": "material", "budget": NaN}',
    "a list for pgn": b'{"pgn": ["1. e4 *"], "network": "material"}',
    "not UTF-8": b'{"pgn": "1. e4 \xff *", "network": "material"}',
    "pgn and fen": b'{"pgn": "1. e4 *", "fen": "8/8/8/8/8/8/8/K1k5 w - - 0 1", "network": "material"}',
    "neither pgn nor fen": b'{"pgn": "  ", "network": "material"}',
    "an unknown search": b'{"pgn": "1. e4 *", "network": "material", "search": "minimax"}',
    "engine_nodes between 0 and its range": b'{"pgn": "1. e4 *", "network": "material", "engine_nodes": 999}',
}
# Inputs that keep the schema but are not a game the site can analyse as asked: 422, within the schema.
UNFIT_SUBMISSIONS = {
    "game_index 2**64": b'{"pgn": "1. e4 *", "network": "material", "search": "value", '
                        b'"game_index": 18446744073709551616}',
    "an unreadable game": b'{"pgn": "1. e4 e5 2. Ke3 *", "network": "material"}',
    "an unknown network": b'{"pgn": "1. e4 *", "network": "no-such-network"}',
    "a budget outside its search's range": b'{"pgn": "1. e4 *", "network": "material", "search": "alphabeta", '
                                           b'"budget": 7}',
}


@pytest.fixture
def token_header(db, memory_broker, material_network) -> dict[str, str]:
    token = Token.objects.create(user=User.objects.create_user("hostile", password="pw")).key
    return {"Authorization": f"Token {token}"}


@pytest.mark.parametrize("body", HOSTILE_SUBMISSIONS.values(), ids=HOSTILE_SUBMISSIONS.keys())
def test_hostile_submissions_get_a_400_within_the_schema(token_header, body):
    _refused_within_the_schema(token_header, body, 400)


@pytest.mark.parametrize("body", UNFIT_SUBMISSIONS.values(), ids=UNFIT_SUBMISSIONS.keys())
def test_unfit_submissions_get_a_422_within_the_schema(token_header, body):
    _refused_within_the_schema(token_header, body, 422)


def _refused_within_the_schema(headers: dict, body: bytes, status: int) -> None:
    from webapp.jobs.models import AnalysisJob

    case = schema["/api/jobs/"]["POST"].Case(body=body, media_type="application/json")
    response = case.call_and_validate(headers=headers)
    assert response.status_code == status, response.text[:300]
    assert response.json()["error"]
    assert AnalysisJob.objects.count() == 0


def test_the_schema_carries_the_bounds_the_views_use():
    """Each bound read from the constant the view checks with, and each body only in the types it takes."""
    from analysis.lens import MAX_SCALE
    from analysis.lens.checks import MAX_POOL
    from analysis.lens.requests import MAX_TOP
    from webapp.lc0compare.views import NODES_MAX, NODES_MIN

    document = served_document()
    position = "/api/jobs/{job_id}/nodes/{node_id}/"

    def parameter(path: str, name: str) -> dict:
        found = [p for p in document["paths"][position + path]["get"]["parameters"] if p["name"] == name]
        return found[0]["schema"]

    assert parameter("lens/neurons/", "top") == {"type": "integer", "minimum": 1, "maximum": MAX_TOP}
    assert parameter("lens/ablate/", "scale") == {"type": "number", "minimum": -MAX_SCALE, "maximum": MAX_SCALE}
    assert parameter("lens/ablate/", "layer")["minimum"] == 0
    assert parameter("lc0/", "nodes") == {"type": "integer", "minimum": NODES_MIN, "maximum": NODES_MAX}
    scan = document["paths"][position + "lens/where-else/"]["post"]["requestBody"]
    assert list(scan["content"]) == ["application/json"]
    fens = document["components"]["schemas"]["FenPool"]["properties"]["fens"]["oneOf"]
    assert fens[0]["maxItems"] == MAX_POOL
    submission = document["components"]["schemas"]["Submission"]["oneOf"]
    assert [branch["$ref"].rsplit("/", 1)[1] for branch in submission] == ["PgnSubmission", "FenSubmission"]


def test_a_scan_body_that_is_not_json_gets_a_415(api_data):
    response = schema["/api/jobs/{job_id}/nodes/{node_id}/lens/where-else/"]["POST"].Case(
        path_parameters={"job_id": str(ATTENTION_JOB), "node_id": 0}, body={"layer": 0, "index": 0, "fens": "x"},
        media_type="application/x-www-form-urlencoded").call(headers=api_data)
    assert response.status_code == 415 and "JSON" in response.json()["error"]


def test_every_api_address_is_in_the_schema():
    """Every route under /api/ (but the schema and its docs page) is one of the schema's paths, with
    each method its view answers; a new endpoint left out of the schema fails here."""
    import re

    from django.urls import URLResolver, get_resolver

    def routes(patterns, prefix=""):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from routes(pattern.url_patterns, prefix + str(pattern.pattern))
            else:
                yield prefix + str(pattern.pattern), pattern.callback

    served = {(path, method) for path, item in served_document()["paths"].items() for method in item}
    routed = set()
    for route, callback in routes(get_resolver().url_patterns):
        if not route.startswith("api/") or route in ("api/schema/", "api/docs/"):
            continue
        path = "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)
        view = callback.cls
        routed |= {(path, method) for method in ("get", "post", "put", "patch", "delete") if hasattr(view, method)}
    assert routed == served
