"""Recent analyses shows a visitor's own jobs and shared ones; the favicon; model cards as Markdown."""

import pytest
from django.contrib.auth.models import User
from django.contrib.staticfiles import finders
from django.test import Client
from rest_framework.authtoken.models import Token

from webapp.jobs.models import AnalysisJob
from webapp.networks.models import Network

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_broker(monkeypatch, material_network):
    monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: None)


def start(client, white):
    response = client.post("/", {"pgn": f'[White "{white}"]\n\n1. e4 *', "network": "material", "search": "value"})
    assert response.status_code == 302
    return AnalysisJob.objects.get(headers__White=white)


def test_recent_lists_only_the_visitors_own_jobs_and_shared_ones():
    alice, bob = Client(), Client()
    job = start(alice, "Alice's game")
    start(bob, "Bob's game")
    for path in ("/", "/recent/"):
        assert "Alice&#x27;s game" in alice.get(path).content.decode()
        assert "Alice&#x27;s game" not in bob.get(path).content.decode()
        assert "Bob&#x27;s game" not in alice.get(path).content.decode()
    assert "Share on home page" in alice.get(f"/jobs/{job.id}/").content.decode()
    assert "Share on home page" not in bob.get(f"/jobs/{job.id}/").content.decode()
    assert alice.post(f"/jobs/{job.id}/share/", {"shared": "1"}).status_code == 302
    assert "Alice&#x27;s game" in bob.get("/recent/").content.decode()
    assert "Stop sharing" in alice.get(f"/jobs/{job.id}/").content.decode()
    assert alice.post(f"/jobs/{job.id}/share/", {"shared": "0"}, HTTP_ACCEPT="application/json").json() == {
        "shared": False}
    assert "Alice&#x27;s game" not in bob.get("/recent/").content.decode()


def test_only_an_owner_may_share():
    job = start(Client(), "Private")
    refused = Client().post(f"/jobs/{job.id}/share/", {"shared": "1"})
    assert refused.status_code == 403 and "Only the browser session" in refused.json()["error"]
    assert not AnalysisJob.objects.get(pk=job.pk).shared


def test_share_needs_a_clear_answer():
    owner = Client()
    job = start(owner, "Mine")
    bad = owner.post(f"/jobs/{job.id}/share/", {"shared": "yes"})
    assert bad.status_code == 400 and bad.json()["error"] == "shared must be 0 or 1."
    assert owner.get(f"/jobs/{job.id}/share/").status_code == 405


def test_a_token_users_jobs_are_theirs_when_signed_in():
    user = User.objects.create_user("carol", password="pw")
    token = Token.objects.create(user=user)
    response = Client().post("/api/jobs/", {"pgn": '[White "Carol API"]\n\n1. d4 *', "network": "material",
                                            "search": "value"}, content_type="application/json",
                             HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 201
    assert AnalysisJob.objects.get(pk=response.json()["id"]).owner == user
    browser = Client()
    assert "Carol API" not in browser.get("/recent/").content.decode()
    browser.login(username="carol", password="pw")
    assert "Carol API" in browser.get("/recent/").content.decode()


def test_favicon_answers(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("sightline/favicon.svg")
    assert finders.find("sightline/favicon.svg")


CARD = """# cf-test

| stage | puzzles |
| --- | --- |
| 1 | 25/30 |

<script>alert(1)</script> [bad](javascript:alert(1))
"""


def test_admin_renders_the_model_card_as_markdown(admin_client, material_network):
    Network.objects.filter(pk=material_network.pk).update(card=CARD)
    page = admin_client.get(f"/admin/networks/network/{material_network.pk}/change/").content.decode()
    assert "<table>" in page and "<td>25/30</td>" in page and "<h1>cf-test</h1>" in page
    assert "<script>alert(1)" not in page and "&lt;script&gt;" in page
    assert 'href="javascript:' not in page


def test_staff_get_links_to_the_admin(client, admin_client, material_network):
    Network.objects.filter(pk=material_network.pk).update(card=CARD)
    panel = admin_client.get("/networks/material/").content.decode()
    assert "edit in the admin" in panel and "<td>25/30</td>" in panel and 'href="/admin/"' in panel
    anonymous = client.get("/networks/material/").content.decode()
    assert "edit in the admin" not in anonymous and 'href="/admin/"' not in anonymous
