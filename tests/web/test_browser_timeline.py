"""The decision timeline on the game page (issue 28, item 9): a bar under the eval graph for every
main-line ply, from the evaluations as they arrive; a click on a bar goes to that ply."""

from __future__ import annotations

import pytest

from tests.web.test_browser import browser, live_site, shot  # noqa: F401 (module fixtures)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_timeline_strip_draws_a_bar_per_ply(live_site, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(live_site["base"])
    page.fill("#id_pgn", "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *")
    page.select_option("#id_network", "cf-tiny")
    page.select_option("#id_search", "policy")
    page.click("button[type=submit]")
    page.wait_for_url("**/jobs/**")
    page.wait_for_function("document.querySelectorAll('#decision-timeline rect.timeline-bar').length === 7",
                           timeout=120_000)
    assert "readout point" in page.inner_text("#decision-timeline-note")
    title = page.text_content("#decision-timeline rect.timeline-bar[data-node='1'] title")
    assert title.startswith("after 1. e4: the network settles on ") and "played" in title
    page.click("#decision-timeline rect.timeline-bar[data-node='3']")
    page.wait_for_function("window.__sightline.current === 3")
    shot(page, "timeline-01-strip")
    assert errors == []
