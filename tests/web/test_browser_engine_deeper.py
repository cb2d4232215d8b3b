"""Stockfish as the headline and the deeper engine, in Chromium (issue 37): with the engine lane on,
the eval bar and the big figure are Stockfish's, labelled, the network's figure beside it under the
network's name; without the lane the network's figure is the headline under its name. "Go deeper"
runs Stockfish on the worker: depth rises, three lines come, a click plays one, Stop stops it."""

from __future__ import annotations

import pytest

from tests.conftest import require_stockfish
from tests.web.test_board_moves import submit
from tests.web.test_browser import browser, live_site, shot  # noqa: F401 - fixtures: a site and Chromium
from tests.web.test_engine_page import TRAP

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HEADLINE = """(id) => { const g = window.__sightline, bar = document.getElementById('evalbar-black').style.height;
  return { big: document.getElementById('eval-big').textContent, label: document.getElementById('eval-big-label').textContent,
           bar: parseFloat(bar), barLabel: document.getElementById('evalbar-label').textContent,
           barSource: document.getElementById('evalbar-source').textContent,
           networkHidden: document.getElementById('eval-network').hidden,
           networkLabel: document.getElementById('eval-network-label').textContent,
           networkFigure: document.getElementById('eval-network-figure').textContent,
           engineText: g.results.engineText(id), engineScore: g.results.engineScore(id), evalText: g.results.evalText(id) }; }"""


def test_stockfish_is_the_headline_and_goes_deeper(live_site, browser):
    require_stockfish()
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    submit(page, live_site["base"], TRAP)
    page.wait_for_function("window.__sightline.review.review?.engine?.complete === true", timeout=60_000)

    # After 4. Nxe5 (node 7): Stockfish's figure on the bar and as the big figure, labelled; cf-tiny's beside.
    page.evaluate("window.__sightline.go(7)")
    h = page.evaluate(HEADLINE, 7)
    assert h["big"] == h["barLabel"] == h["engineText"] and h["label"] == h["barSource"] == "Stockfish"
    assert h["bar"] == pytest.approx(100 * (1 - h["engineScore"]), abs=0.1)
    assert not h["networkHidden"] and h["networkLabel"] == "cf-tiny" and h["networkFigure"] == h["evalText"]
    assert h["engineText"] != h["evalText"]  # two sources, two figures: the headline is not the network's

    # Go deeper on the position after 3... Nd4 (node 6): three lines, depth rising, live.
    page.evaluate("window.__sightline.go(6)")
    page.select_option("#engine-deeper-count", "3")
    page.select_option("#engine-deeper-budget", "until-stopped")
    page.click("#engine-deeper-start")
    page.wait_for_function("window.__sightline.engineDeeper.byNode.get(6)?.depth >= 1", timeout=30_000)
    first = page.evaluate("window.__sightline.engineDeeper.byNode.get(6).depth")
    page.wait_for_function("(d) => window.__sightline.engineDeeper.byNode.get(6).depth > d", arg=first, timeout=30_000)
    page.wait_for_function("document.querySelectorAll('#engine-deeper-lines li').length === 3", timeout=30_000)
    assert page.is_visible("#engine-deeper-stop") and page.is_hidden("#engine-deeper-start")
    assert "depth" in page.inner_text("#engine-deeper-status") and "searching" in page.inner_text("#engine-deeper-status")
    shot(page, "engine-deeper-01-lines")

    # A click on a line's second move plays the line up to it as a variation.
    line = page.evaluate("window.__sightline.engineDeeper.byNode.get(6).lines[1].pv.slice(0, 2)")
    page.locator("#engine-deeper-lines li").nth(1).locator(".pv-move").nth(1).click()
    page.wait_for_function("(line) => { const g = window.__sightline, n = g.nodes[g.current]; return n.uci === line[1] && "
                           "g.nodes[n.parent].uci === line[0] && g.nodes[n.parent].parent === 6; }",
                           arg=line, timeout=30_000)

    # Stop: the search ends, says so, and keeps its lines.
    page.click("#engine-deeper-stop")
    page.wait_for_function("window.__sightline.engineDeeper.byNode.get(6)?.final === true", timeout=30_000)
    final = page.evaluate("window.__sightline.engineDeeper.byNode.get(6)")
    assert final["stopped"] and final["status"] == "done" and len(final["lines"]) == 3
    page.evaluate("window.__sightline.go(6)")
    assert page.inner_text("#engine-deeper-status").startswith("Stockfish") and "stopped" in page.inner_text("#engine-deeper-status")
    assert page.is_visible("#engine-deeper-start")
    assert not errors, errors

    # A viewer (another browser session) may start one too; a click shows its line on the board, not added.
    viewer = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    viewer.on("pageerror", lambda e: errors.append(str(e)))
    viewer.goto(page.url.split("#")[0] + "#6")
    viewer.wait_for_function("window.__sightline && window.__sightline.current === 6")
    viewer.select_option("#engine-deeper-count", "1")
    viewer.click("#engine-deeper-start")
    viewer.wait_for_function("document.querySelectorAll('#engine-deeper-lines li .pv-move').length >= 4", timeout=30_000)
    nodes = viewer.evaluate("window.__sightline.nodes.length")
    viewer.locator("#engine-deeper-lines li").first.locator(".pv-move").nth(3).click()  # deeper than any variation
    viewer.mouse.move(5, 5)
    assert viewer.evaluate("document.getElementById('board').classList.contains('previewing')")
    assert "not added" in viewer.inner_text("#move-status") and viewer.evaluate("window.__sightline.nodes.length") == nodes
    viewer.click("#engine-deeper-stop")
    viewer.wait_for_function("window.__sightline.engineDeeper.byNode.get(6)?.final === true", timeout=30_000)
    assert viewer.evaluate("window.__sightline.engineDeeper.byNode.get(6).stopped")
    assert not errors, errors


def test_without_the_engine_lane_the_network_is_the_headline(live_site, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(live_site["base"])
    page.fill("#id_pgn", "1. e4 e5 2. Nf3 *")
    page.select_option("#id_network", "cf-tiny")
    page.select_option("#id_search", "policy")
    page.fill("#id_engine_nodes", "0")
    page.click("button[type=submit]")
    page.wait_for_url("**/jobs/**")
    page.wait_for_function("window.__sightline && window.__sightline.status.status === 'done'", timeout=120_000)
    page.evaluate("window.__sightline.go(1)")
    h = page.evaluate(HEADLINE, 1)
    assert h["big"] == h["barLabel"] == h["evalText"] and h["label"] == h["barSource"] == "cf-tiny"
    assert h["networkHidden"] and h["engineText"] is None
