"""The game page's top bar at 1400 px stays one line (issue 37): a flagged, untrained network, long
player names, the search and the status did wrap it, pushing the graph below the fold."""

from __future__ import annotations


import pytest

from tests.web.test_browser import browser, shot  # noqa: F401 - fixture: Chromium

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("orm_beside_playwright")]
GAME = '[White "Anderssen, Adolf"]\n[Black "Kieseritzky, Lionel"]\n[Event "London, casual game"]\n[Result "1-0"]\n\n' \
       "1. e4 e5 2. f4 exf4 3. Bc4 Qh4+ 4. Kf1 b5 1-0"



def test_the_top_bar_is_one_line_at_1400_px_for_a_flagged_network(live_server, transactional_db, tiny_network,
                                                                    browser):  # noqa: F811
    from webapp.jobs.gameinput import parse_pgn
    from webapp.jobs.jobs import create_job

    assert tiny_network.value_sanity.flagged and tiny_network.is_untrained  # both badges in the bar
    job = create_job(parse_pgn(GAME), tiny_network, "mcts", 400, dispatch=False)
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"{live_server.url}/jobs/{job.id}/")
    page.wait_for_selector(".topbar .badge-value")
    rows = page.eval_on_selector(".topbar", """bar => {
        const shown = [...bar.children].filter((e) => e.getClientRects().length && getComputedStyle(e).display !== 'none');
        return shown.map((e) => { const r = e.getBoundingClientRect(); return [e.className || e.id, r.top, r.bottom]; });
    }""")
    shot(page, "topbar-1400")
    middles = [(top + bottom) / 2 for _, top, bottom in rows]
    assert len(rows) >= 8 and max(middles) - min(middles) < 12, rows  # every item on the bar's one line
    assert page.eval_on_selector(".topbar", "b => b.scrollWidth <= b.clientWidth")  # and nothing sticking out
