"""The networks page in Chromium, at 1400 px and on a 390 px phone: reached from the home page, one row
per registered network, the very weak one marked, nothing sticking out of the phone's screen."""

from __future__ import annotations

import os

import pytest

from tests.web.test_browser import browser, shot  # noqa: F401 - fixture: Chromium
from tests.web.test_networks_page import shipped_rows
from tests.web.test_phone import PHONE, assert_fits
from webapp.networks.models import Network

pytestmark = [pytest.mark.browser]


@pytest.fixture(scope="module", autouse=True)
def _orm_beside_playwright():
    """Playwright's sync API runs an event loop in this thread; the ORM calls here (setup, the
    database's flush at teardown) are plain synchronous ones, so Django's guard is lifted meanwhile."""
    before = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    yield
    if before is None:
        del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = before


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
    names = page.eval_on_selector_all(".networks-table tbody tr", "rs => rs.map(r => r.id.slice(4))")
    assert sorted(names) == sorted(Network.objects.values_list("name", flat=True))
    assert page.is_visible("#net-cb-cpu .badge-untrained:text('very weak')")
    assert "default" in page.inner_text("#net-ag-cpu th")
    assert page.inner_text("#net-ag-cpu td:nth-child(6)").startswith(Network.objects.get(name="ag-cpu").strength.elo.text)
    shot(page, "networks-1400")
    page.click("text=Networks")  # the header's link leads here too
    page.wait_for_url("**/networks/")
    phone = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
    phone.goto(site + "/networks/")
    assert_fits(phone)
    shot(phone, "networks-390")
    assert errors == []
