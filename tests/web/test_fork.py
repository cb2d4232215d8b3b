"""Fork: anyone with a job's link explores moves in a copy of their own; the original is untouched."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.web.conftest import OPERA_GAME
from tests.web.test_variations import dispatched, owned_job, post, run  # noqa: F401 - fixture
from webapp.jobs.models import AnalysisJob

pytestmark = pytest.mark.django_db


def test_a_visitor_forks_and_adds_moves_to_the_copy_only(client, material_network, dispatched,  # noqa: F811
                                                          django_capture_on_commit_callbacks):
    original = owned_job(client, material_network, OPERA_GAME)
    run(original)
    before = AnalysisJob.objects.get(pk=original.pk).nodes
    visitor = Client()
    page = visitor.get(f"/jobs/{original.id}/").content.decode()
    assert 'id="fork-form"' in page and 'id="fork-form"' not in client.get(f"/jobs/{original.id}/").content.decode()
    assert post(visitor, original, {"parent": 4, "moves": ["b1c3"]})[0] == 403
    with django_capture_on_commit_callbacks(execute=True):
        response = visitor.post(f"/jobs/{original.id}/fork/", {"node": "4"})
    copy = AnalysisJob.objects.exclude(pk=original.pk).get()
    assert response.status_code == 302 and response["Location"] == f"/jobs/{copy.id}/#4"
    assert copy.nodes == before and copy.network == original.network and copy.search == original.search
    assert dispatched == [str(copy.id)]  # queued: its positions' results are cached, so it finishes at once
    status, body = post(visitor, copy, {"parent": 4, "moves": ["b1c3"]})
    assert status == 201 and body["nodes"][0]["san"] == "Nc3"
    assert AnalysisJob.objects.get(pk=original.pk).nodes == before
    assert post(client, copy, {"parent": 4, "moves": ["b1c3"]})[0] == 403  # the copy is the visitor's


def test_a_fork_of_a_missing_job_or_a_bad_node(client, material_network):
    original = owned_job(client, material_network)
    assert client.post("/jobs/00000000-0000-0000-0000-000000000000/fork/").status_code == 404
    response = client.post(f"/jobs/{original.id}/fork/", {"node": "99"})
    assert response.status_code == 400 and "no position 99" in response.content.decode()
    assert client.get(f"/jobs/{original.id}/fork/").status_code == 405
    assert AnalysisJob.objects.count() == 1


@pytest.mark.django_db(transaction=True)  # the job is sent when its transaction commits
def test_a_fork_while_the_broker_is_down_saves_nothing(client, material_network, broker_down):
    original = owned_job(client, material_network)
    response = Client().post(f"/jobs/{original.id}/fork/", {"node": "0"})
    assert response.status_code == 503 and response["Retry-After"]
    assert AnalysisJob.objects.count() == 1
