"""The lens follows the game (issue 37, item 5): ``manage.py serve`` with cf-tiny driven by Chromium.
Stepping with the keyboard and opening shared links keep every lens request valid for the shown
position (no 4xx); the grid's move is the played one unless chosen; a typed SAN move is taken and an
illegal one refused in the page; labels are SAN; "settles at" and the rank per point agree with the
API; the grid shows values, a legend and its strongest cell, where the ablation opens; a grid cell
opens the same numbered head in the explorer (layers and heads count from 0 everywhere)."""

from __future__ import annotations

import re

import pytest

from tests.web.test_browser import browser, live_site, shot  # noqa: F401 (module fixtures)
from tests.web.test_board_moves import submit

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# 6. Re1 is f1e1: the move the grid used to keep on every later ply (a 400 each time).
GAME = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 *"
PLAYED = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6", "e1g1", "f8e7", "f1e1", "b7b5"]
UCI = re.compile(r"\b[a-h][1-8][a-h][1-8][qrbn]?\b")


def watch(page) -> dict:
    """Every refused lens request and every console error, from now on."""
    seen = {"refused": [], "console": [], "errors": [], "grid": []}
    page.on("response", lambda r: seen["refused"].append(f"{r.status} {r.url}") if r.status >= 400 and "/api/" in r.url else None)
    page.on("request", lambda r: seen["grid"].append(r.url) if "/lens/grid/" in r.url else None)
    page.on("console", lambda m: seen["console"].append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))
    return seen


def grid_for(page, node: int, move: str) -> None:
    """Wait until the lens shows ``node`` and its grid is of ``move``."""
    page.wait_for_function(f"window.__sightline.lens.node === {node} && "
                           f"document.querySelector('#lens-grid table[data-move=\"{move}\"]') !== null", timeout=90_000)


def api(page, path: str) -> dict:
    """A lens answer from the API, asked again while a worker computes it (202)."""
    return page.evaluate("""async (path) => { const url = `/api/jobs/${window.__sightline.page.id}/nodes/${path}`;
      for (;;) { const r = await fetch(url); if (r.status !== 202) return r.json(); await new Promise(d => setTimeout(d, 300)); } }""", path)


def test_stepping_and_shared_links_keep_the_lens_valid(live_site, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    seen = watch(page)
    submit(page, live_site["base"], GAME)
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    page.click("#lens-open")
    grid_for(page, 1, PLAYED[1])
    assert page.input_value("#lens-grid-move") == PLAYED[1]

    # Ten plies forward and back with the keys: each shown position gets its own played move.
    page.click("#lens h3")
    for ply in range(2, 12):
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"window.__sightline.current === {ply}")
        if ply in (10, 11):  # f1e1 played at 10; at 11 (Black to move) it is illegal
            grid_for(page, ply, PLAYED[ply])
    for ply in range(10, 0, -1):
        page.keyboard.press("ArrowLeft")
        page.wait_for_function(f"window.__sightline.current === {ply}")
    grid_for(page, 1, PLAYED[1])
    asked = [re.search(r"nodes/(\d+)/lens/grid/\?move=(\w+)", url).groups() for url in seen["grid"]]
    assert asked and all(move == PLAYED[int(node)] for node, move in asked), asked
    assert seen["refused"] == [] and seen["console"] == [] and seen["errors"] == []

    # A shared link whose move is illegal at its position falls back to the played move; a legal one is kept.
    path = page.evaluate("location.pathname")
    other = browser.new_page(viewport={"width": 1400, "height": 1000})
    shared = watch(other)
    other.goto(f"{live_site['base'].rstrip('/')}{path}?lens=1&gmove=f1e1#3")
    grid_for(other, 3, PLAYED[3])
    other.goto(f"{live_site['base'].rstrip('/')}{path}?lens=1&gmove=g8f6#5")
    grid_for(other, 5, "g8f6")
    assert other.input_value("#lens-grid-move") == "g8f6"
    assert shared["refused"] == [] and shared["console"] == [] and shared["errors"] == []


def test_moves_in_san_settles_at_grid_legend_and_numbering(live_site, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    seen = watch(page)
    submit(page, live_site["base"], GAME)
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")  # after 1. e4
    page.click("#lens-open")
    grid_for(page, 1, "e7e5")

    # The played move is offered first, in SAN, beside the network's top moves; no UCI in any label.
    options = page.eval_on_selector_all("#lens-grid-move option", "os => os.map(o => [o.value, o.textContent])")
    assert options[0] == ["e7e5", "e5 (played)"] and len(options) >= 2
    curves = api(page, "1/lens/logit/?moves=e7e5")
    page.wait_for_function(f"document.querySelectorAll('#lens-strip .lens-rank').length === {len(curves['readouts'])}",
                           timeout=60_000)
    for box in ("#lens-strip", "#lens-curves", "#lens-bars", "#lens-settles", "#lens-grid"):
        assert not UCI.findall(page.inner_text(box)), (box, page.inner_text(box))

    # The rank of the chosen move per point, and where the network settles (from the API's own tops).
    ranks = page.eval_on_selector_all("#lens-strip .lens-rank", "rs => rs.map(r => r.textContent)")
    assert ranks == [f"#{pt['rank']}" for pt in curves["curves"]["e7e5"]]
    top = curves["top"]
    settles = min(i for i in range(len(top)) if all(t == top[-1] for t in top[i:]))
    assert page.get_attribute("#lens-settles", "data-readout") == str(settles)
    assert page.get_attribute("#lens-strip .lens-settles", "data-readout") == str(settles)
    assert page.inner_text("#lens-settles").startswith(f"Settles at {curves['readouts'][settles]}")

    # The grid: a value in each cell, a legend, the strongest cell marked, and the ablation opened on it.
    values = page.eval_on_selector_all("#lens-grid td[data-value]", "tds => tds.map(t => [Number(t.dataset.value), t.textContent.trim()])")
    assert len(values) == 8 and all(re.fullmatch(r"~?[+-]\d+\.\d\d", text) for _, text in values), values
    assert page.locator("#lens-grid .lens-grid-max").count() == 1 and page.is_visible("#lens-grid-legend")
    best = page.eval_on_selector("#lens-grid .lens-grid-max", "td => [Number(td.dataset.layer), Number(td.dataset.head), Math.abs(Number(td.dataset.value))]")
    assert best[2] == max(abs(v) for v, _ in values)
    page.wait_for_function(f"document.querySelector('#lens-bars-caption').textContent.includes('Layer {best[0]} head {best[1]} × 0')",
                           timeout=60_000)
    assert page.input_value("#lens-layer") == str(best[0]) and page.input_value("#lens-head") == str(best[1])
    shot(page, "lens-05-follows-grid")

    # A typed SAN move is taken (curves and grid redrawn for it); an illegal one is said and never sent.
    page.fill("#lens-move-input", "Nc6")
    page.press("#lens-move-input", "Enter")
    grid_for(page, 1, "b8c6")
    assert page.input_value("#lens-grid-move") == "b8c6" and "Nc6" in page.inner_text("#lens-curves")
    asked = len(seen["grid"])
    page.fill("#lens-move-input", "Ke3")
    page.press("#lens-move-input", "Enter")
    assert page.inner_text("#lens-move-error") == "Ke3 is not a legal move here."
    page.fill("#lens-move-input", "g8f6")  # UCI too
    page.press("#lens-move-input", "Enter")
    grid_for(page, 1, "g8f6")
    assert all("Ke3" not in url for url in seen["grid"][asked:])

    # One numbering: grid cell L1 H3 opens layer 1, head 3 in the explorer.
    page.click("#lens-grid td[data-layer='1'][data-head='3']")
    page.wait_for_function("document.querySelector('#att-caption').textContent.startsWith('Layer 1, head 3')",
                           timeout=60_000)
    assert page.input_value("#att-layer") == "1" and page.input_value("#att-head") == "3"
    layer_labels = page.eval_on_selector_all("#att-layer option", "os => os.map(o => o.textContent)")
    assert layer_labels == ["0", "1"]
    assert seen["refused"] == [] and seen["errors"] == []
