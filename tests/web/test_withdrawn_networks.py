"""Withdrawn and retired networks (issue 41, item 4): every request path that starts new work on a
network refuses it with the reason, as a 410 (``webapp.networks.lookup``), and stores and queues
nothing; what is already stored on the network stays readable."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token

from tests.conftest import ROOT
from tests.web.conftest import SHORT_GAME
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.models import AnalysisJob, AttentionMap, DeepSearch, Lc0Comparison, LensResult
from webapp.lens.tasks import compute_lens
from webapp.networks.atlas import request_atlas
from webapp.networks.lookup import WITHDRAWN_STATUS, in_service, out_of_service, withdrawal
from webapp.networks.models import HeadAtlas, Network
from webapp.ondemand.refused import Refused

pytestmark = pytest.mark.django_db

FEN = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"
ADMIN = "cf-tiny-test was withdrawn by an admin."
RETIRED = "cf-tiny-test was retired by serve: its file was moved to weights/retired/."


@pytest.fixture
def sent(monkeypatch):
    """Every task handed to the broker."""
    tasks = []
    monkeypatch.setattr("workers.dispatch.send_task", lambda name, args, queue, task_id=None: tasks.append(name))
    return tasks


@pytest.fixture
def job(client, tiny_network):
    """A job made while its network was offered, owned by ``client``."""
    made = create_job(parse_pgn(SHORT_GAME), tiny_network, "mcts", 16, dispatch=False)
    session = client.session
    session["owned_jobs"] = [str(made.id)]
    session.save()
    return made


def withdraw(network: Network, retired: str = "") -> None:
    """As the admin's "active" box does (``retired`` blank), or as ``serve`` retires it."""
    Network.objects.filter(pk=network.pk).update(active=False, is_default=False, retired=retired)
    network.refresh_from_db()


def error_of(response) -> str:
    if response["Content-Type"].startswith("application/json"):
        return response.json()["error"]
    return response.content.decode()


def assert_refused(response, reason: str = ADMIN) -> None:
    assert response.status_code == WITHDRAWN_STATUS, response.content[:400]
    assert reason in error_of(response)


def test_the_reason_says_who_took_it_away(tiny_network):
    assert withdrawal(tiny_network) == "" and out_of_service(tiny_network) is None
    assert in_service(tiny_network) is tiny_network
    withdraw(tiny_network)
    assert withdrawal(tiny_network) == ADMIN
    with pytest.raises(Refused) as refused:
        in_service(tiny_network)
    assert refused.value.status == 410 and refused.value.message.startswith(ADMIN)
    withdraw(tiny_network, retired="its file was moved to weights/retired/")
    assert withdrawal(tiny_network) == RETIRED
    tiny_network.active = True
    tiny_network.save(update_fields=["active"])  # offered again: the retirement's reason goes with it
    tiny_network.refresh_from_db()
    assert tiny_network.retired == "" and withdrawal(tiny_network) == ""


@pytest.mark.parametrize("retired, reason", [("", ADMIN), ("its file was moved to weights/retired/", RETIRED)])
def test_the_home_form_refuses_a_new_analysis(client, job, sent, retired, reason):
    withdraw(job.network, retired)
    response = client.post("/", {"fen": FEN, "network": job.network.name, "search": "value"})
    assert_refused(response, reason)
    assert AnalysisJob.objects.count() == 1 and sent == []


def test_the_api_refuses_a_new_analysis(client, job, sent):
    token = Token.objects.create(user=User.objects.create_user("scripter", password="pw")).key
    withdraw(job.network)
    response = client.post("/api/jobs/", {"fen": FEN, "network": job.network.name, "search": "value"},
                           content_type="application/json", HTTP_AUTHORIZATION=f"Token {token}")
    assert_refused(response)
    assert response.json()["errors"]["network"] == [error_of(response)]
    assert AnalysisJob.objects.count() == 1 and sent == []


def test_the_cost_estimate_names_the_reason(client, job):
    withdraw(job.network)
    assert_refused(client.get("/estimate/", {"network": job.network.name, "search": "value", "budget": "1"}))


def test_the_head_explorer_is_refused(client, job, sent):
    withdraw(job.network)
    assert_refused(client.post(f"/networks/{job.network.name}/heads/explore/", {"head": "0.0"}))
    assert AnalysisJob.objects.count() == 1 and sent == []


def test_the_head_atlas_is_not_queued_and_a_stored_one_is_shown_with_a_note(client, job, sent,
                                                                           django_capture_on_commit_callbacks):
    withdraw(job.network)
    with django_capture_on_commit_callbacks(execute=True):
        assert_refused(client.post(f"/networks/{job.network.name}/heads/compute/"))
        assert request_atlas(job.network) is None  # the background paths (a checked upload, serve's start)
    assert not HeadAtlas.objects.exists() and sent == []
    page = client.get(f"/networks/{job.network.name}/heads/").content.decode()
    assert ADMIN in page and 'id="atlas-compute"' not in page
    Network.objects.filter(pk=job.network.pk).update(active=True)
    from django.core.management import call_command
    call_command("head_atlas", job.network.name, "--positions", "8", stdout=open("/dev/null", "w"))
    withdraw(job.network)
    page = client.get(f"/networks/{job.network.name}/heads/")
    assert page.status_code == 200 and 'id="atlas-withdrawn"' in page.content.decode()
    assert ADMIN in page.content.decode() and "atlas-cell" in page.content.decode()


LENS_GETS = ["attention/?layer=0", "lens/logit/", "lens/ablate/?layer=0&index=0", "lens/grid/?move=e2e4",
             "lens/neurons/?layer=0", "lens/neuron/?layer=0&index=0", "lens/carriers/?move=e2e4",
             "lens/where-else/?layer=0&index=0", "lens/where-else/?layer=0&index=0&pool=game"]


@pytest.mark.parametrize("address", LENS_GETS)
def test_attention_maps_the_lens_and_neuron_tools_are_refused(client, job, sent, address):
    withdraw(job.network)
    assert_refused(client.get(f"/api/jobs/{job.id}/nodes/0/{address}"))
    assert not AttentionMap.objects.exists() and not LensResult.objects.exists() and sent == []


def test_a_where_else_scan_over_a_fen_list_is_refused(client, job, sent):
    withdraw(job.network)
    body = {"layer": 0, "index": 0, "fens": [FEN]}
    assert_refused(client.post(f"/api/jobs/{job.id}/nodes/0/lens/where-else/", json.dumps(body),
                               content_type="application/json"))
    assert not LensResult.objects.exists() and sent == []


def test_what_is_stored_is_still_answered(client, job, sent, monkeypatch):
    address = f"/api/jobs/{job.id}/nodes/1/lens/logit/"
    assert client.get(address).status_code == 202 and sent == ["sightline.compute_lens"]
    entry = LensResult.objects.get()
    assert compute_lens(str(job.id), 1, entry.pk) == "ready"
    withdraw(job.network)
    assert client.get(address).status_code == 200  # stored: answered
    assert_refused(client.get(f"/api/jobs/{job.id}/nodes/1/lens/logit/?retry=1&moves=e7e5"))  # new: refused
    for page in (f"/jobs/{job.id}/", f"/api/jobs/{job.id}/", f"/jobs/{job.id}/review/", f"/api/jobs/{job.id}/nodes/1/"):
        assert client.get(page).status_code == 200, page
    assert LensResult.objects.count() == 1 and sent == ["sightline.compute_lens"]
    page = client.get(f"/jobs/{job.id}/").content.decode()
    assert 'id="network-withdrawn"' in page and ADMIN in page  # the page says why its tools refuse


def test_the_lc0_comparison_is_refused(client, sent):
    from webapp.networks.registry import register_checkpoint

    maia = register_checkpoint(ROOT / "weights/maia-1100.safetensors", "maia-1100")
    job = create_job(parse_pgn(SHORT_GAME), maia, "mcts", 16, dispatch=False)
    withdraw(maia)
    for address in (f"/jobs/{job.id}/nodes/1/lc0/?nodes=60", f"/api/jobs/{job.id}/nodes/1/lc0/?nodes=60"):
        assert_refused(client.get(address), "maia-1100 was withdrawn by an admin.")
    assert not Lc0Comparison.objects.exists() and sent == []


def test_a_deeper_search_is_refused(client, job, sent):
    withdraw(job.network)
    response = client.post(f"/jobs/{job.id}/deeper/", json.dumps({"node": 0, "budget": 100}),
                           content_type="application/json")
    assert_refused(response)
    assert not DeepSearch.objects.exists() and sent == []


def test_new_moves_are_refused_and_moves_already_there_are_followed(client, job, sent):
    withdraw(job.network)
    moves = f"/jobs/{job.id}/moves/"
    assert_refused(client.post(moves, json.dumps({"parent": 0, "moves": ["d2d4"]}), content_type="application/json"))
    job.refresh_from_db()
    assert len(job.nodes) == job.total_positions == len(parse_pgn(SHORT_GAME).nodes) and sent == []
    there = client.post(moves, json.dumps({"parent": 0, "moves": ["e2e4"]}), content_type="application/json")
    assert there.status_code == 200 and there.json()["nodes"] == [] and sent == []


def test_a_copy_of_the_analysis_is_refused(client, job, sent):
    withdraw(job.network)
    assert_refused(client.post(f"/jobs/{job.id}/fork/", {"node": "1"}))
    assert AnalysisJob.objects.count() == 1 and sent == []


def test_the_networks_api_says_why(client, tiny_network):
    def listed() -> dict:
        return next(n for n in client.get("/api/networks/").json()["networks"] if n["name"] == tiny_network.name)

    assert listed()["withdrawn"] is None and listed()["offered"] is True
    withdraw(tiny_network, retired="its file was moved to weights/retired/")
    assert listed()["withdrawn"] == RETIRED and listed()["offered"] is False


def test_the_analyze_pgn_command_says_why(tiny_network, tmp_path):
    from io import StringIO

    from django.core.management import call_command
    from django.core.management.base import CommandError

    path = tmp_path / "game.pgn"
    path.write_text(SHORT_GAME)
    withdraw(tiny_network)
    with pytest.raises(CommandError, match=ADMIN):
        call_command("analyze_pgn", str(path), "--network", tiny_network.name, "--json", stdout=StringIO())
    assert not AnalysisJob.objects.exists()
