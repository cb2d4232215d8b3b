"""The Lens view end to end (issue 28): ``manage.py serve`` with cf-tiny driven by Chromium. Open
the Lens beside the attention explorer, remove a head and see the policy redrawn, steer it with the
slider, step through the game with the keyboard with the lens open, and open a shared lens link."""

from __future__ import annotations

import pytest

from tests.web.test_browser import browser, live_site, shot  # noqa: F401 (module fixtures)
from tests.web.test_board_moves import submit

pytestmark = [pytest.mark.browser, pytest.mark.slow]

GAME = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *"


def bars(page) -> list[tuple[float, float]]:
    """(clean, scaled) probability of each drawn bar row (an untrained net's changes are small)."""
    return page.eval_on_selector_all("#lens-bars .lens-bar-row",
                                     "els => els.map(e => [Number(e.dataset.clean), Number(e.dataset.scaled)])")


def set_scale(page, value: float) -> None:
    page.eval_on_selector("#lens-scale", f"el => {{ el.value = '{value}'; el.dispatchEvent(new Event('input')); "
                                         "el.dispatchEvent(new Event('change')); el.blur(); }")


def test_lens_ablate_steer_step_and_share(live_site, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    submit(page, live_site["base"], GAME)  # cf-tiny, policy search, until the analysis is done
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")  # after 1. e4: Black to move

    page.click("#lens-open")
    readouts = page.evaluate("fetch(`/api/jobs/${window.__sightline.page.id}/nodes/1/lens/`).then(r => r.json())")
    assert readouts["units"]["head"]["layers"] == 2 and "policy" not in readouts["unavailable"]
    page.wait_for_function(f"document.querySelectorAll('#lens-strip .lens-cell').length === {len(readouts['readouts'])}",
                           timeout=60_000)
    assert page.locator("#lens-curves path").count() == 4  # the network's top 4 moves
    page.wait_for_function("document.querySelectorAll('#lens-grid td').length === 8", timeout=60_000)

    # Scale 0 (the default) removes the head the grid found strongest: clean and scaled differ somewhere.
    page.wait_for_function("document.querySelectorAll('#lens-bars .lens-bar-row').length === 10", timeout=60_000)
    strongest = page.eval_on_selector("#lens-grid .lens-grid-max", "td => [td.dataset.layer, td.dataset.head]")
    page.wait_for_function(f"document.querySelector('#lens-bars-caption').textContent.includes("
                           f"'Layer {strongest[0]} head {strongest[1]} × 0')", timeout=60_000)
    removed = bars(page)
    assert max(abs(c - s) for c, s in removed) > 1e-7, removed
    shot(page, "lens-01-removed")

    # The slider steers it: at 1 the policy is the clean one; at 3 it is redrawn again.
    page.select_option("#lens-layer", "0")
    page.select_option("#lens-head", "2")
    set_scale(page, 1)
    page.wait_for_function("document.querySelector('#lens-bars-caption').textContent.includes('head 2 × 1')",
                           timeout=60_000)
    assert max(abs(c - s) for c, s in bars(page)) < 1e-6
    set_scale(page, 3)
    page.wait_for_function("document.querySelector('#lens-bars-caption').textContent.includes('head 2 × 3')",
                           timeout=60_000)
    steered = bars(page)
    assert steered != removed and max(abs(c - s) for c, s in steered) > 1e-7
    assert "lens=1" in page.url and "lhead=0%3A2" in page.url and "scale=3" in page.url
    shared = page.url

    # Keyboard stepping keeps the lens open and redraws it for the next position.
    page.click("#lens h3")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("window.__sightline.current === 2")
    assert page.is_visible("#lens") and page.get_attribute("#lens-open", "aria-selected") == "true"
    page.wait_for_function("document.querySelector('#lens-bars-caption').textContent.includes('head 2 × 3')"
                           " && window.__sightline.lens.node === 2", timeout=60_000)

    # A grid cell opens that head's map in the explorer.
    page.click("#lens-grid td[data-layer='1'][data-head='3']")
    page.wait_for_function("document.querySelector('#att-caption').textContent.includes('Layer 1, head 3')",
                           timeout=60_000)

    # The shared link restores the lens view: its tab, head, scale and redrawn bars.
    other = browser.new_page(viewport={"width": 1400, "height": 1000})
    other.on("pageerror", lambda e: errors.append(str(e)))
    other.goto(shared)
    other.wait_for_function("document.querySelector('#lens-bars-caption').textContent.includes('Layer 0 head 2 × 3')",
                            timeout=60_000)
    assert other.get_attribute("#lens-open", "aria-selected") == "true"
    assert other.input_value("#lens-head") == "2" and other.input_value("#lens-scale") == "3"
    assert bars(other) == steered
    shot(other, "lens-02-shared-link")
    assert errors == []


def test_a_network_without_a_lens_says_why(live_site, browser):  # noqa: F811
    page = browser.new_page()
    page.goto(live_site["base"])
    page.fill("#id_pgn", GAME)
    page.select_option("#id_network", "material")
    page.select_option("#id_search", "value")
    page.click("button[type=submit]")
    page.wait_for_url("**/jobs/**")
    page.click("#lens-open")
    page.wait_for_function("document.querySelector('#lens-why').textContent.includes('not a network')")
    assert page.is_hidden("#lens-body")


def test_the_atlas_page_sorts_heads_by_their_measured_importance(live_site, browser):  # noqa: F811
    """The atlas job also removes every head (the causal atlas); its table sorts by either figure."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(live_site["base"] + "networks/cf-tiny/heads/")
    page.click("#atlas-compute")
    page.wait_for_function("document.querySelectorAll('#importance-table tbody tr').length === 8", timeout=300_000)
    page.wait_for_selector("#importance-table[data-sorted='kl']")  # the page's script has run
    column = "rows => rows.map(r => Number(r.dataset[KEY]))"
    for key in ("dscore", "kl"):
        page.select_option("#importance-sort", key)
        page.wait_for_selector(f"#importance-table[data-sorted='{key}']")
        values = page.eval_on_selector_all("#importance-table tbody tr", column.replace("KEY", f"'{key}'"))
        assert values == sorted(values, reverse=True) and values[0] > 0, (key, values)
    page.select_option("#importance-sort", "order")
    order = page.eval_on_selector_all("#importance-table tbody tr", "rows => rows.map(r => r.dataset.order)")
    assert order == sorted(order) and len(page.locator(".atlas-effect").all()) == 8
    shot(page, "lens-03-causal-atlas")
    assert errors == []
