"""The engine lane on the pages, without a browser (issue 29): the home form's engine budget field and
its help, the job page's places for the engine's figure, review, disagreements and marks toggle, and
the legend of the engine's marks in lichess's terms."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from tests.web.conftest import SHORT_GAME
from webapp.jobs.forms import engine_help
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.review import engine_legend

pytestmark = pytest.mark.django_db


def test_the_home_form_renders_the_engine_budget_with_its_default_and_help(client, tiny_network, settings):
    settings.SIGHTLINE_ENGINE_NODES = 100_000
    html = client.get(reverse("home")).content.decode()
    field = re.search(r'<input type="number" name="engine_nodes"[^>]*>', html)
    assert field and 'value="100000"' in field.group(0)
    help_text = re.search(r'<p class="muted small" id="engine-nodes-help">([^<]*)</p>', html).group(1)
    assert "Default 100,000" in help_text and "0 turns it off" in help_text


def test_the_engine_budgets_help_says_when_stockfish_is_missing():
    assert "not installed" in engine_help(100_000, None)
    assert "not installed" not in engine_help(100_000, "/usr/games/stockfish")
    assert "Default 20,000" in engine_help(20_000, "/usr/games/stockfish")


def test_an_out_of_range_engine_budget_is_shown_beside_its_field(client, tiny_network):
    response = client.post(reverse("home"), {"pgn": SHORT_GAME, "network": tiny_network.name, "search": "policy",
                                             "engine_nodes": "5"})
    assert response.status_code == 400
    html = response.content.decode()
    after_field = html[html.index('id="id_engine_nodes"'):]
    assert "out of range" in after_field[:1500]


def page_data(html: str) -> dict:
    return json.loads(re.search(r'<script id="page-data" type="application/json">(.*?)</script>', html, re.S).group(1))


@pytest.mark.parametrize("nodes, note", [(0, ""), (20_000, "No engine line: Stockfish is not installed.")])
def test_the_job_page_has_the_engine_places_and_the_reason_for_no_engine(client, tiny_network, nodes, note):
    job = create_job(parse_pgn(SHORT_GAME), tiny_network, "policy", 1, dispatch=False, engine_nodes=nodes)
    if note:
        job.engine_note = note
        job.save()
    html = client.get(reverse("job", args=[job.id])).content.decode()
    for element in ("engine-info", "engine-note", "review-table", "disagreements", "marks-network", "graph-smooth"):
        assert f'id="{element}"' in html, element
    status = page_data(html)["snapshot"]["job"]
    assert status["engine_nodes"] == nodes and status["engine_note"] == note  # the page says why from these


def test_the_engine_legend_is_lichesss_steps_and_the_network_legend_stays_beside_it(client, tiny_network):
    short, long = engine_legend()
    assert "?! from 5, ? from 10, ?? from 15 points" in short and long.startswith(short)
    job = create_job(parse_pgn(SHORT_GAME), tiny_network, "policy", 1, dispatch=False, engine_nodes=0)
    html = client.get(reverse("job", args=[job.id])).content.decode()
    legend = re.search(r'<p class="muted small" id="judgement-legend"[^>]*>', html, re.S).group(0)
    assert "data-engine-short=\"Marks: the reference engine" in legend and "data-network-short=\"Marks:" in legend


def test_the_review_alone_is_what_the_page_refreshes(client, tiny_network):
    """The review, the disagreements and the swing flag, without node results: a refresh of the review
    must not fill gaps that the websocket's snapshots are there to fill."""
    from webapp.jobs.live.messages import job_snapshot

    job = create_job(parse_pgn(SHORT_GAME), tiny_network, "policy", 1, dispatch=False, engine_nodes=0)
    url = page_data(client.get(reverse("job", args=[job.id])).content.decode())["urls"]["review"]
    answer = client.get(url)
    assert answer.status_code == 200 and set(answer.json()) == {"review", "disagreements", "network_swing"}
    snapshot = job_snapshot(job)
    assert all(answer.json()[k] == snapshot.get(k) for k in answer.json())
    assert client.get(reverse("job_review", args=["no-such-job"])).status_code == 404
    assert client.post(url).status_code == 405
