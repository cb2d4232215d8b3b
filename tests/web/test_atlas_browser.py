"""The head atlas page in Chromium (issue 37): the grid is drawn before plotly's 4.8 MB arrive (the
chart follows), and on a 390 px phone no label is broken inside a word."""

from __future__ import annotations

import os

import pytest
from django.core.management import call_command

from tests.web.test_browser import browser, shot  # noqa: F401 - fixture: Chromium
from tests.web.test_phone import PHONE, assert_fits
from webapp.networks.models import HeadAtlas

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("orm_beside_playwright")]
# The longest labels, so that eight to a row on a phone must wrap.
LONG_LABELS = ["same-colour-squares", "unlabelled", "opponent-pieces", "reverse-movement",
               "opponent-knight", "knight-moves", "own-queen", "unlabelled"]



@pytest.fixture
def atlas_page(live_server, transactional_db, tiny_network) -> str:
    """cf-tiny's atlas, widened to eight heads a layer (each head twice) with the longest labels."""
    call_command("head_atlas", tiny_network.name, "--positions", "8", stdout=open(os.devnull, "w"))
    row = HeadAtlas.objects.get(network=tiny_network)
    data, layers = row.data, row.data["layers"]

    def widen(rows):
        return [list(r) + list(r) for r in rows]

    importance = data.get("importance") or {}
    for key in ("kl", "score"):
        if importance.get(key) is not None:
            importance[key] = widen(importance[key])
    data.update(heads=2 * data["heads"], static=widen(data["static"]), thumbnails=widen(data["thumbnails"]),
                labels=[LONG_LABELS[:2 * data["heads"]] for _ in range(layers)],
                lift={k: widen(v) for k, v in data["lift"].items()}, mass={k: widen(v) for k, v in data["mass"].items()})
    row.save()
    return f"{live_server.url}/networks/{tiny_network.name}/heads/"


def test_the_grid_is_drawn_before_plotly_arrives_and_the_chart_after(atlas_page, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    held = []
    page.route("**/vendor/plotly.min.js", lambda route: held.append(route))  # plotly is held until the grid has been checked
    page.goto(atlas_page, wait_until="domcontentloaded")  # a blocking plotly script would hold this for ever
    page.wait_for_function("document.querySelector('.atlas-cell canvas').getContext('2d')"
                           ".getImageData(0, 0, 1, 1).data[3] > 0")  # startAtlas drew the thumbnails
    assert page.is_visible(".atlas-grid") and not page.query_selector("#atlas-chart .main-svg")
    for _ in range(100):  # the page asks for plotly once the grid is painted
        if held:
            break
        page.wait_for_timeout(100)
    assert len(held) == 1
    held[0].continue_()
    page.wait_for_selector("#atlas-chart .main-svg")


def test_atlas_labels_wrap_between_words_on_a_phone(atlas_page, browser):  # noqa: F811
    phone = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
    phone.goto(atlas_page)
    assert_fits(phone)
    broken = phone.evaluate("""() => [...document.querySelectorAll('.atlas-label')].flatMap((label) => {
        const text = label.firstChild, words = [], range = document.createRange();
        let at = 0;
        for (const part of text.data.split(/(?<=-)/)) {  // each word with its hyphen
          range.setStart(text, at); range.setEnd(text, at + part.replace(/-$/, '').length); at += part.length;
          if (range.getClientRects().length > 1) words.push(label.textContent + ': ' + part);
        }
        return words;
    })""")
    shot(phone, "atlas-390")
    assert phone.eval_on_selector_all(".atlas-cell", "cs => cs.length") == 16
    assert broken == []
