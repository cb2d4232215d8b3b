"""The Concepts panel in Chromium: on a game of the tiny network whose concept atlas is stored, the
Concepts tab asks the API for the shown position's scores (a worker, run here, answers) and draws
the what-where strip (a row per concept, a cell per readout point) and a square concept's board."""

from __future__ import annotations

import threading

import pytest

from tests.web.test_browser import browser, shot  # noqa: F401 - fixture: Chromium
from tests.web.test_probes import LIST, random_fens
from webapp.probes import tasks
from webapp.probes.atlas import atlas_settings, compute_and_store

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("orm_beside_playwright")]


def test_the_concepts_panel_draws_the_strip(live_server, transactional_db, tiny_network, browser, settings,
                                            monkeypatch):  # noqa: F811
    from webapp.jobs.gameinput import parse_pgn
    from webapp.jobs.jobs import create_job

    settings.SIGHTLINE_CONCEPT_POSITIONS, settings.SIGHTLINE_CONCEPT_COMPONENTS = 60, 16
    settings.SIGHTLINE_CONCEPT_BOOTSTRAP, settings.SIGHTLINE_CONCEPT_LIST = 20, LIST
    settings.SIGHTLINE_CONCEPT_FENS = random_fens(600)
    row = compute_and_store(tiny_network, atlas_settings())
    sent, asked = [], threading.Event()
    monkeypatch.setattr("workers.dispatch.send_task", lambda name, args, queue, task_id=None: (
        sent.append((name, args)), asked.set()))
    job = create_job(parse_pgn("1. e4 e5 *"), tiny_network, "policy", 1, dispatch=False)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{live_server.url}/jobs/{job.id}/#1")
    page.click("#concepts-open")
    assert asked.wait(30)
    name, args = next(s for s in sent if s[0] == "sightline.compute_concept_scores")
    tasks.compute_concept_scores.run(*args)
    points = len(row.data["points"])
    page.wait_for_function(f"document.querySelectorAll('#concepts-strip tbody tr').length === {len(LIST)}",
                           timeout=60_000)
    assert page.locator("#concepts-strip tr[data-concept=piece_on_square] td.concept-cell").count() == points
    assert page.locator("#concepts-map .concept-square").count() == 64  # piece_on_square at its best point
    shot(page, "concepts-01-strip")
    assert errors == []
