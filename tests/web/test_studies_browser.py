"""A study from its page in Chromium: the form starts it, the study's page shows its progress (here
by the poll: the test server has no websocket) and, once its worker is done, the results table, the
figures and the drill-down whose rows open the game page at their position."""

from __future__ import annotations

import threading

import pytest

from tests.conftest import require_stockfish
from tests.web.test_browser import browser, shot  # noqa: F401 - fixture: Chromium
from webapp.studies.tasks import run_study

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("orm_beside_playwright")]

FENS = ("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3\n"
        "r5k1/pp3p1p/2b2qp1/3pr3/8/4P2P/R1PN1PP1/Q3K2R w K - 0 19\n"
        "1r6/1PN5/3p4/4kpp1/1R6/P3n3/K1P5/8 b - - 0 49\n")


def test_a_study_page_shows_its_progress_then_its_results(live_server, transactional_db, tiny_network, browser,
                                                          monkeypatch):  # noqa: F811
    require_stockfish()
    sent, go = [], threading.Event()
    monkeypatch.setattr("workers.dispatch.send_task", lambda name, args, queue, task_id=None: sent.append(args))
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(live_server.url + "/studies/")
    page.select_option("#id_network", "cf-tiny-test")
    page.select_option("#id_method", "forgotten")
    assert page.inner_text("#method-why-not") == ""
    page.check("input[name=kind][value=fens]")
    page.fill("#id_text", FENS)
    page.fill("#id_settings", '{"nodes": 1000}')
    page.click("#start-study")
    page.wait_for_url("**/studies/*/")
    assert page.inner_text("#progress-text") == "0 / 3" and page.inner_text("#study-status") == "queued"
    shot(page, "study-01-queued")

    worker = threading.Thread(target=lambda: (go.wait(), run_study(*sent[0])))
    worker.start()
    go.set()
    page.wait_for_selector("#results-table", timeout=120_000)
    worker.join()
    assert page.inner_text("#progress-text") == "3 / 3" and page.inner_text("#study-status") == "done"
    assert page.locator("#results-table tbody tr").count() >= 1 and page.locator(".study-figure svg").count() >= 1
    assert page.locator("#drill-table tbody tr").count() == 3
    shot(page, "study-02-done")
    page.click("#drill-table tbody tr:nth-child(2) button")
    page.wait_for_url("**/jobs/**")
    assert errors == []
