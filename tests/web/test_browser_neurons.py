"""The Lens view's neuron panel end to end (issue 28, item 7): ``manage.py serve`` with cf-tiny driven
by Chromium. Open the Lens, see a layer's most active units, click one and see its activation drawn
on the panel's board, the carriers of a move with exact figures, and a where-else scan of this game."""

from __future__ import annotations

import chess
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


def test_remove_or_steer_a_unit_carrier_boards_and_where_else_boards(live_site, browser):  # noqa: F811
    """Issue 37, item 6: a picked unit is removed (then steered) through the ablate quantity; carriers are
    small boards of their map that open the unit; where-else results are boards beside the mean map,
    with what removing the unit does at this game's positions."""
    page = browser.new_page(viewport={"width": 1400, "height": 1400})
    errors, refused = [], []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("response", lambda r: refused.append(f"{r.status} {r.url}") if r.status >= 400 and "/api/" in r.url else None)
    submit(page, live_site["base"], GAME)
    page.keyboard.press("Home")
    page.click("#lens-open")
    page.wait_for_function("document.querySelectorAll('#neurons-units .neurons-unit').length === 10", timeout=60_000)
    unit = page.locator("#neurons-units .neurons-unit").nth(1)
    index = unit.get_attribute("data-index")
    unit.click()

    # Picking a unit removes it: the moves it changes most, clean -> scaled, as the API answers.
    page.wait_for_selector(f"#neurons-effect[data-unit='0:{index}'][data-scale='0']", timeout=60_000)
    shown = page.eval_on_selector_all("#neurons-effect li", "ls => ls.map(l => [l.dataset.uci, Number(l.dataset.clean), Number(l.dataset.scaled)])")
    answer = page.evaluate(f"""async () => {{ const url = `/api/jobs/${{window.__sightline.page.id}}/nodes/0/lens/ablate/?unit=mlp&layer=0&index={index}&scale=0`;
      for (;;) {{ const r = await fetch(url); if (r.status !== 202) return r.json(); await new Promise(d => setTimeout(d, 300)); }} }}""")
    assert shown == [[m["uci"], m["clean"], m["scaled"]] for m in answer["policy"][:len(shown)]] and len(shown) == 6
    texts = page.eval_on_selector_all("#neurons-effect li", "ls => ls.map(l => l.textContent.trim())")
    start = chess.Board()
    assert all(text.startswith(start.san(chess.Move.from_uci(uci)) + " ") for text, (uci, _, _) in zip(texts, shown)), texts

    # Steered at 2: redrawn; a scale outside [-4, 4] is refused in the page and not asked.
    page.fill("#neurons-scale", "2")
    page.click("#neurons-steer")
    page.wait_for_selector(f"#neurons-effect[data-unit='0:{index}'][data-scale='2']", timeout=60_000)
    steered = page.eval_on_selector_all("#neurons-effect li", "ls => ls.map(l => Number(l.dataset.scaled))")
    assert steered != [s for _, _, s in shown]
    page.fill("#neurons-scale", "9")
    page.click("#neurons-steer")
    assert page.inner_text("#neurons-steer-status") == "The scale must be a number from -4 to 4."

    # Carriers as boards with their map; a click opens that unit (its map on the panel's board).
    page.wait_for_function("document.querySelectorAll('#neurons-carriers li[data-drawn]').length === 8", timeout=120_000)
    assert page.locator("#neurons-carriers li svg").count() == 8
    carrier = page.locator("#neurons-carriers li").nth(3)
    layer, which = carrier.get_attribute("data-layer"), carrier.get_attribute("data-index")
    fills = carrier.locator(".heat rect").evaluate_all("rs => rs.map(r => r.getAttribute('fill'))")
    assert len(set(fills)) > 8
    carrier.locator("button").click()
    page.wait_for_selector(f"#neurons-board[data-unit='{layer}:{which}']", timeout=60_000)
    assert page.input_value("#neurons-layer") == layer

    # Where else, over this game: boards with the peak square marked, the mean map drawn, the removal's effect.
    page.select_option("#neurons-pool", "game")
    page.click("#neurons-scan")
    page.wait_for_function("document.querySelector('#neurons-scan-status').textContent.includes('positions scanned')",
                           timeout=60_000)
    assert page.locator("#neurons-where li svg").count() == 5 and page.locator("#neurons-where li .query").count() == 5
    mean = page.eval_on_selector_all("#neurons-mean-board .heat rect", "rs => rs.map(r => r.getAttribute('fill'))")
    assert len(mean) == 64 and "transparent" not in mean and len(set(mean)) > 8
    page.wait_for_function("document.querySelectorAll('#neurons-where .neurons-removed[data-change]').length === 5",
                           timeout=120_000)
    assert "removing it there: top move" in page.inner_text("#neurons-where")
    shot(page, "lens-06-neuron-tools")
    assert errors == [] and refused == []
