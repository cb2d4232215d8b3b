"""The attention split in the explorer (issue 28 item 6), end to end: ``manage.py serve`` with
cf-tiny (a Shaw Chessformer) driven by Chromium. Turn on the split and see three maps (content,
position term, final) for the query square; a click on one makes a new query for all three."""

from __future__ import annotations

import pytest

from tests.web.test_browser import browser, live_site, shot  # noqa: F401 (module fixtures)
from tests.web.test_board_moves import submit

pytestmark = [pytest.mark.browser, pytest.mark.slow]

GAME = "1. e4 e5 2. Nf3 Nc6 *"


def part_heat(page, part: str) -> list[str]:
    return page.eval_on_selector_all(f"#att-split-panel [data-part='{part}'] .heat rect",
                                     "rs => rs.map(r => r.getAttribute('fill'))")


def test_the_split_shows_content_position_and_final_side_by_side(live_site, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    submit(page, live_site["base"], GAME)  # cf-tiny, policy search, until the analysis is done
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")  # after 1. e4: Black to move

    page.click("#explorer-open")
    page.wait_for_function("document.querySelector('#att-caption').textContent.startsWith('Layer 0,')", timeout=60_000)
    page.select_option("#att-head", index=2)  # head 1: value "1" (after "mean of heads")
    page.check("#att-split-toggle")
    page.wait_for_function("document.querySelector('#att-split-caption').textContent.includes('taken apart')",
                           timeout=120_000)
    assert page.locator("#att-split-panel .att-split-part").count() == 3
    maps = {part: part_heat(page, part) for part in ("content", "position", "final")}
    assert all(len(fills) == 64 and "transparent" not in fills for fills in maps.values()), maps
    assert maps["content"] != maps["final"]  # the position term moves the map
    # The final map is the explorer's own map for this head and query.
    assert page.evaluate("""(() => { const ex = window.__sightline.explorer, own = ex.values(ex.head),
        fin = ex.split.values('final', ex.head); return Math.max(...own.map((v, i) => Math.abs(v - fin[i]))); })()""") < 5e-3
    assert "split=1" in page.url and "head=1" in page.url
    shot(page, "split-01-three-maps")

    page.click("#att-split-panel [data-part='position'] rect[data-square='d4']")
    page.wait_for_function("document.querySelector('#att-split-caption').textContent.includes('where d4 attends')")
    assert "query=d4" in page.url and "where d4 attends" in page.inner_text("#att-caption")
    assert errors == []
