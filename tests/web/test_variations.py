"""Lines played on the board (POST /jobs/<id>/moves/): checked, added to the tree with their
keys, and analysed by the job's worker, whether the job had finished or is still running."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from analysis.evaluator import MaterialEvaluator
from tests.web.conftest import SHORT_GAME
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.models import AnalysisJob
from webapp.jobs.variations import add_line
from webapp.jobs.run.runner import JobRun

pytestmark = pytest.mark.django_db


@pytest.fixture
def dispatched(monkeypatch):
    sent = []
    monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: sent.append(k["task_id"]))
    return sent


def owned_job(client, network, pgn=SHORT_GAME):
    job = create_job(parse_pgn(pgn), network, "value", 1, dispatch=False)
    session = client.session
    session["owned_jobs"] = [str(job.id)]
    session.save()
    return job


def post(client, job, body) -> tuple[int, dict]:
    response = client.post(f"/jobs/{job.id}/moves/", json.dumps(body) if not isinstance(body, bytes) else body,
                           content_type="application/json")
    return response.status_code, response.json()


def run(job):
    messages = []
    finished = JobRun(job, MaterialEvaluator(), lambda kind, payload: messages.append((kind, payload))).run()
    return finished, messages


def test_a_move_on_a_finished_job_is_added_and_analysed(client, material_network, dispatched,
                                                        django_capture_on_commit_callbacks):
    job = owned_job(client, material_network)
    finished, _ = run(job)
    assert finished.status == "done" and finished.total_positions == 9
    # After 1. e4 e5 (node 2) White plays 2. Bc4 instead of 2. Nf3.
    with django_capture_on_commit_callbacks(execute=True):
        status, body = post(client, job, {"parent": 2, "moves": ["f1c4"]})
    assert status == 201 and body["requeued"] and dispatched == [str(job.id)]
    new = body["nodes"][0]
    assert body["node"] == new["id"] == 9 and new["san"] == "Bc4" and new["parent"] == 2 and not new["main"]
    assert new["key"] == material_network.position_key(__import__("chess").Board(new["fen"]))
    job.refresh_from_db()
    assert job.status == "queued" and job.total_positions == 10 and 9 in job.nodes[2]["children"]

    finished, messages = run(job)
    assert finished.status == "done" and finished.evaluated == finished.searched == 10
    searched = [p["node"] for k, p in messages if k == "ply" and "search" in p]
    judged = [i["node"] for k, p in messages if k == "judgements" for i in p["items"]]
    assert 9 in searched and 9 in judged
    snapshot = client.get(f"/api/jobs/{job.id}/").json()
    assert snapshot["results"]["9"]["eval"] and snapshot["results"]["9"]["search"]


def test_a_line_follows_the_tree_and_adds_only_new_moves(client, material_network, dispatched):
    job = owned_job(client, material_network)
    # 1. e4 e5 exist (nodes 1 and 2); 2. d4 is new, and so is 2... exd4 after it.
    status, body = post(client, job, {"parent": 0, "moves": ["e2e4", "e7e5", "d2d4", "e5d4"]})
    assert status == 201 and [n["san"] for n in body["nodes"]] == ["d4", "exd4"]
    assert body["nodes"][0]["parent"] == 2 and body["nodes"][1]["parent"] == body["nodes"][0]["id"]
    again_status, again = post(client, job, {"parent": 0, "moves": ["e2e4", "e7e5", "d2d4", "e5d4"]})
    assert again_status == 200 and again["nodes"] == [] and again["node"] == body["node"]
    assert len(AnalysisJob.objects.get(pk=job.pk).nodes) == 11
    assert dispatched == []  # the job had not started: its worker finds the new nodes when it does


@pytest.mark.parametrize("body, status, words", [
    ({"parent": 0, "moves": ["e2e5"]}, 400, "The white pawn on e2 cannot move to e5 in the first position."),
    ({"parent": 2, "moves": ["g1f3", "g1f3"]}, 400, "There is no piece on g1 after 2. Nf3."),
    ({"parent": 0, "moves": ["e7e5"]}, 400, "It is White's move in the first position: the pawn on e7 is Black's."),
    ({"parent": 0, "moves": ["e2e4", "e8e7"]}, 400, "The black king on e8 cannot move to e7 after 1. e4."),
    ({"parent": 0, "moves": ["zz"]}, 400, "not a move in UCI notation"),
    ({"parent": 99, "moves": ["e2e4"]}, 404, "no position 99"),
    ({"parent": "0", "moves": ["e2e4"]}, 400, "parent must be a node id"),
    ({"parent": 0, "moves": []}, 400, "moves must be a list"),
    ({"parent": 0, "moves": ["e2e4"] * 33}, 400, "at most 32 moves"),
    ([1, 2], 400, "JSON object"),
    (b"{not json", 400, "must be a JSON object"),
])
def test_refused_lines_change_nothing(client, material_network, body, status, words):
    job = owned_job(client, material_network)
    got, answer = post(client, job, body)
    assert got == status and words in answer["error"], answer
    assert len(AnalysisJob.objects.get(pk=job.pk).nodes) == 9


def test_a_promotion_needs_its_piece(client, material_network, dispatched):
    job = owned_job(client, material_network, '[FEN "8/4P3/8/8/8/8/k7/4K3 w - - 0 1"]\n\n*')
    status, answer = post(client, job, {"parent": 0, "moves": ["e7e8"]})
    assert status == 400 and "e7e8 is a promotion" in answer["error"] and "e7e8q" in answer["error"]
    status, answer = post(client, job, {"parent": 0, "moves": ["e7e8n"]})
    assert status == 201 and answer["nodes"][0]["san"] == "e8=N"


def test_only_the_owner_adds_moves(client, material_network):
    job = owned_job(client, material_network)
    status, answer = post(Client(), job, {"parent": 0, "moves": ["d2d4"]})
    assert status == 403 and "started this analysis" in answer["error"]
    assert Client().get(f"/jobs/{job.id}/moves/").status_code == 405
    missing = client.post("/jobs/00000000-0000-0000-0000-000000000000/moves/", "{}", content_type="application/json")
    assert missing.status_code == 404 and "No analysis has the id" in missing.content.decode()


def test_a_running_job_analyses_a_line_added_while_it_runs(client, material_network):
    job = owned_job(client, material_network)
    added = []

    def on_node(output):  # the first evaluation published: a viewer plays a move meanwhile
        if not added:
            added.append(add_line(AnalysisJob.objects.get(pk=job.pk), 0, ["d2d4"]))

    messages = []
    finished = JobRun(job, MaterialEvaluator(), lambda kind, payload: messages.append((kind, payload)),
                      on_node=on_node).run()
    assert added and added[0].created and not added[0].requeued  # running: no second dispatch
    assert finished.status == "done" and finished.total_positions == 10
    assert finished.evaluated == finished.searched == 10
    assert 9 in [p["node"] for k, p in messages if k == "ply" and "search" in p]


def test_a_move_into_check_is_refused_in_words(client, material_network):
    job = owned_job(client, material_network, '[FEN "4r1k1/8/8/8/8/8/4B3/4K3 w - - 0 1"]\n\n*')
    status, answer = post(client, job, {"parent": 0, "moves": ["e2d3"]})
    assert status == 400 and answer["error"] == ("The white bishop on e2 cannot move to d3 in the first position: "
                                                 "it would leave the white king in check."), answer
    assert "e2d3" not in answer["error"]
