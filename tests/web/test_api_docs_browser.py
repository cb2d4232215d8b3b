"""The API's docs page in Chromium (issue 37): reached from the header's "API" link, Swagger UI draws
every operation of the schema, and the page asks nothing of any other site."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.web.test_browser import browser, shot  # noqa: F401 - fixture: Chromium

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("orm_beside_playwright")]



def test_the_docs_page_draws_every_operation_from_our_own_files(live_server, transactional_db, material_network,
                                                                browser):  # noqa: F811
    from tests.web.test_api_fuzz import served_document

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    hosts, errors = set(), []
    page.on("request", lambda r: hosts.add(urlsplit(r.url).netloc) if r.url.startswith("http") else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(live_server.url + "/networks/")
    page.click(".topbar >> text=API")
    page.wait_for_url("**/api/docs/")
    page.wait_for_selector(".opblock")
    operations = sum(len(item) for item in served_document()["paths"].values())
    page.wait_for_function(f"document.querySelectorAll('.opblock').length === {operations}")
    assert page.is_visible(".opblock-summary-path[data-path='/api/jobs/{job_id}/export.pgn']")
    shot(page, "api-docs-1400")
    assert hosts == {urlsplit(live_server.url).netloc} and errors == []
