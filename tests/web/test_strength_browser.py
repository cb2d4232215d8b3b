"""The home form's network picker in Chromium (issue 37, item 4): grouped in a player's words, each option
with its Elo on Stockfish's scale and one agent's puzzles, the scale explained beside it; at 1400 px and
on a 390 px phone."""

from __future__ import annotations

import pytest

from tests.web.test_browser import browser, shot  # noqa: F401 - fixture: Chromium
from tests.web.test_phone import PHONE, assert_fits
from tests.web.test_strength_words import shipped_networks
from webapp.networks import picker

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("orm_beside_playwright")]


@pytest.fixture
def site(live_server, transactional_db, material_network, settings):
    from tests.conftest import ROOT

    settings.SIGHTLINE_WEIGHTS_DIR = ROOT / "weights"
    shipped_networks()
    return live_server.url


def test_home_picker_is_grouped_and_says_its_scale(site, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(site + "/")
    groups = page.eval_on_selector_all("#id_network optgroup", "gs => gs.map(g => [g.label, "
                                       "[...g.querySelectorAll('option')].map(o => o.value)])")
    assert [label for label, _ in groups] == [picker.HUMAN, picker.STRONGEST, picker.TAKING_APART, picker.OTHERS]
    assert dict(groups)[picker.HUMAN] == ["maia-1900", "maia-1500", "maia-1100"]
    assert page.input_value("#id_network") == "cf-small"  # the default, wherever its group puts it
    label = page.inner_text("#id_network option[value=maia-1500]")
    assert "plays like a Lichess player rated 1500-1599" in label and "(raw policy, top move)" in label
    assert "value, one ply" in page.inner_text("#id_network option[value=cb-sv]")
    page.select_option("#id_network", "maia-1500")
    assert page.input_value("#id_network") == "maia-1500"
    help_ = page.locator("#strength-help")
    assert help_.is_visible() and "not Lichess" in help_.inner_text()
    assert "UCI_Elo" in page.get_attribute("#strength-help .help", "title")
    shot(page, "home-picker-1400")
    phone = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
    phone.goto(site + "/")
    assert phone.is_visible("#strength-help")
    assert_fits(phone)
    shot(phone, "home-picker-390")
    assert errors == []
