"""The Lens view's neuron panel end to end (issue 28, item 7): ``manage.py serve`` with cf-tiny driven
by Chromium. Open the Lens, see a layer's most active units, click one and see its activation drawn
on the panel's board, the carriers of a move with exact figures, and a where-else scan of this game."""

from __future__ import annotations

import pytest

from tests.web.test_browser import browser, live_site, shot  # noqa: F401 (module fixtures)
from tests.web.test_board_moves import submit

pytestmark = [pytest.mark.browser, pytest.mark.slow]

GAME = "1. e4 e5 2. Nf3 Nc6 *"


def test_neuron_panel_unit_map_carriers_and_where_else(live_site, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1400})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    submit(page, live_site["base"], GAME)  # cf-tiny, policy search, until the analysis is done
    page.keyboard.press("Home")
    page.click("#lens-open")

    # The layer's most active units; the first is picked and its map drawn on the panel's board.
    page.wait_for_function("document.querySelectorAll('#neurons-units .neurons-unit').length === 10", timeout=60_000)
    page.select_option("#neurons-layer", "1")
    page.wait_for_function("document.querySelectorAll('#neurons-units .neurons-unit').length === 10"
                           " && document.querySelector('#neurons-unit-name').textContent.startsWith('unit 1:')",
                           timeout=60_000)
    unit = page.locator("#neurons-units .neurons-unit").nth(2)
    index = unit.get_attribute("data-index")
    unit.click()
    page.wait_for_selector(f"#neurons-board[data-unit='1:{index}']", timeout=60_000)
    assert f"Unit 1:{index}: peak" in page.inner_text("#neurons-map-caption")
    fills = page.eval_on_selector_all("#neurons-board .heat rect", "rs => rs.map(r => r.getAttribute('fill'))")
    assert len(fills) == 64 and len(set(fills)) > 8 and "transparent" not in fills

    # The carriers of the played move: listed with the re-measured figures marked exact.
    page.wait_for_function("document.querySelectorAll('#neurons-carriers li[data-layer]').length === 8", timeout=60_000)
    assert page.input_value("#neurons-move") == "e2e4"
    assert page.locator("#neurons-carriers .exact").count() == 8

    # Where else it fires over this game's positions: progress, then positions that link to the game.
    page.select_option("#neurons-pool", "game")
    page.click("#neurons-scan")
    page.wait_for_function("document.querySelector('#neurons-scan-status').textContent.includes('positions scanned')",
                           timeout=60_000)
    assert page.inner_text("#neurons-scan-status").startswith("5 positions scanned")
    assert page.locator("#neurons-where li").count() == 5 and page.locator("#neurons-where a").count() == 5
    shot(page, "lens-04-neurons")
    assert errors == []
