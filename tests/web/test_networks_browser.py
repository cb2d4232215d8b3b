"""The networks page in Chromium, at 1400 px and on a 390 px phone: reached from the home page, one row
per registered network, the very weak one marked, the ablations' sections below, nothing sticking out of
the phone's screen."""

from __future__ import annotations


import pytest

from tests.web.test_ablation_networks import stores  # noqa: F401 - fixture: two ablations' stores
from tests.web.test_browser import browser, shot  # noqa: F401 - fixture: Chromium
from tests.web.test_networks_page import shipped_rows
from tests.web.test_phone import PHONE, assert_fits
from webapp.networks.models import Network

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("orm_beside_playwright")]



@pytest.fixture
def site(live_server, transactional_db, material_network):
    shipped_rows(["ag-cpu", "cb-cpu", "giraffe"])
    return live_server.url


def test_networks_page_from_home_at_desktop_and_phone_width(site, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(site + "/")
    assert "VERY WEAK" in page.inner_text("#id_network option[value=cb-cpu]")
    page.click("#compare-networks")
    page.wait_for_url("**/networks/")
    names = page.eval_on_selector_all("#networks .networks-table tbody tr", "rs => rs.map(r => r.id.slice(4))")
    assert sorted(names) == sorted(Network.objects.values_list("name", flat=True))
    assert page.is_visible("#net-cb-cpu .badge-untrained:text('very weak')")
    assert "default" in page.inner_text("#net-ag-cpu th")
    found = Network.objects.get(name="ag-cpu").strength
    assert page.inner_text("#net-ag-cpu td:nth-child(6)").startswith(found.rating.text)  # about 980 (880-1090)
    assert found.elo.text in page.inner_text("#net-ag-cpu td:nth-child(6)")
    shot(page, "networks-1400")
    page.click("text=Networks")  # the header's link leads here too
    page.wait_for_url("**/networks/")
    phone = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
    phone.goto(site + "/networks/")
    assert_fits(phone)
    shot(phone, "networks-390")
    assert errors == []


def test_a_multi_game_upload_is_picked_and_analysed(site, browser, tmp_path, monkeypatch):  # noqa: F811
    from tests.web.conftest import OPERA_GAME
    from webapp.jobs.models import AnalysisJob

    monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: None)  # no workers here: the job is queued
    games = tmp_path / "two.pgn"
    games.write_text(OPERA_GAME + '\n[White "Anna"]\n[Black "Bob"]\n[Result "0-1"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n')
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(site + "/")
    page.select_option("#id_network", "material")
    page.set_input_files("#id_pgn_file", str(games))
    page.click("button[type=submit]")
    page.wait_for_selector("#game-picker")
    assert "2 games" in page.inner_text("#game-picker legend")
    assert page.eval_on_selector("#game-picker legend", "e => !e.closest('.error, [role=alert]')")
    assert 'White "Anna"' in page.input_value("#id_pgn")
    shot(page, "multi-game-picker")
    page.check("#game-picker input[value='1']")
    page.click("button[type=submit]")
    page.wait_for_url("**/jobs/**")
    assert AnalysisJob.objects.get().headers["White"] == "Anna"


# Whether a select is wide enough for each of its options' text (measured in its own font).
FITS = """(sel) => { const ctx = document.createElement('canvas').getContext('2d'), s = getComputedStyle(sel);
  ctx.font = `${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;
  const room = sel.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight) - 16;  // the arrow
  return [...sel.options].filter((o) => ctx.measureText(o.text).width > room).map((o) => o.text); }"""


def test_the_home_form_at_1400_px(site, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(site + "/")
    assert page.eval_on_selector("#id_search", FITS) == []  # search names whole
    page.select_option("#id_search", "value")
    assert not page.is_visible("#id_budget") and page.is_visible("#budget-fixed")  # no empty disabled box
    page.select_option("#id_search", "mcts")
    assert page.is_visible("#id_budget") and not page.is_visible("#budget-fixed")
    page.select_option("#id_network", "material")
    page.wait_for_function("() => /per position/.test(document.getElementById('estimate').textContent)")
    assert "no measurement yet" not in page.inner_text("#estimate")
    shot(page, "home-1400")


def test_the_ablation_sections_at_desktop_and_phone_width(site, browser, stores):  # noqa: F811
    """Each ablation's table below the main one, its very weak variant marked; nothing sticks out of a phone."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(site + "/networks/")
    sections = page.eval_on_selector_all("section.ablation", "ss => ss.map(s => s.id)")
    assert sections == ["ablation-cb-targets", "ablation-cf-position"]
    rows = page.eval_on_selector_all("#ablation-cf-position tbody tr", "rs => rs.map(r => r.id)")
    assert rows == [f"variant-cf-position-{v}" for v in ("shaw", "relative_bias", "absolute")]
    assert page.is_visible("#variant-cf-position-relative_bias .badge-untrained:text('very weak')")
    shot(page, "networks-ablations-1400")
    phone = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
    phone.goto(site + "/networks/#ablation-cf-position")
    assert_fits(phone)
    shot(phone, "networks-ablations-390")
