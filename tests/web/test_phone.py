"""A 390 x 844 phone: the home form and the game page fit the screen (no horizontal overflow),
and the game page's sharing works there: comments and NAGs from the PGN in the move list,
Copy FEN, the board SVG link and the PGN export (read back with python-chess).
"""

from __future__ import annotations

import io

import chess.pgn
import pytest

from tests.web.test_browser import browser, live_site, shot  # noqa: F401 - fixtures: a site and Chromium

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PHONE = {"width": 390, "height": 844}
PGN = ('[Event "Phone test"] [White "Ann"] [Black "Bob"]\n\n'
       '{A game annotated at length, so that the move list must wrap its comments on a narrow screen} '
       '1. e4! {Best by test} e5 2. Nf3 $5 Nc6 (2... d6 {Philidor}) 3. Bb5 a6 *\n')

# Elements that stick out of the screen, left or right, unless a scrolling or clipping box holds them.
OVERFLOW = """() => {
  const width = document.documentElement.clientWidth, out = [];
  const held = (el) => { for (let p = el.parentElement; p && p !== document.body; p = p.parentElement)
    if (getComputedStyle(p).overflowX !== 'visible') return true; return false; };
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || el.closest('[hidden]') || held(el)) continue;
    const text = getComputedStyle(el).overflowX === 'visible' && el.scrollWidth > el.clientWidth + 1
      && el.clientWidth > 0 && r.left + el.scrollWidth > width + 0.5;  // text running out of its box
    if (r.right > width + 0.5 || (r.left < -0.5 && r.right > 0) || text)  // wholly off-screen: a library's probe
      out.push(`${el.tagName.toLowerCase()}#${el.id}.${el.className.baseVal ?? el.className} ${r.left.toFixed(0)}..${r.right.toFixed(0)}`);
  }
  return {scroll: document.documentElement.scrollWidth, width, out: out.slice(0, 12)};
}"""


def assert_fits(page) -> None:
    fit = page.evaluate(OVERFLOW)
    assert fit["scroll"] <= fit["width"] == PHONE["width"] and fit["out"] == [], fit


def test_home_and_game_page_fit_a_phone(live_site, browser):  # noqa: F811
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=2)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_site["base"].rstrip("/"))
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(live_site["base"])
    assert_fits(page)
    page.fill("#id_pgn", "1. e4 e5 2. Ke3")
    page.click("button[type=submit]")
    page.wait_for_selector("text=Ply 3 (2. Ke3): illegal move")
    assert_fits(page)
    shot(page, "phone-01-home")

    page.fill("#id_pgn", PGN)
    page.select_option("#id_network", "cf-tiny")
    page.select_option("#id_search", "policy")
    page.click("button[type=submit]")
    page.wait_for_url("**/jobs/**")
    page.wait_for_function("window.__sightline && window.__sightline.status.status === 'done'", timeout=120_000)
    assert page.inner_text("#game-title").startswith("Ann - Bob")
    comments = page.eval_on_selector_all("#moves .comment", "cs => cs.map(c => c.textContent)")
    assert "Best by test" in comments and "Philidor" in comments and comments[0].startswith("A game annotated")
    nags = page.eval_on_selector_all("#moves .move .nag", "ns => ns.map(n => n.textContent).filter(Boolean)")
    assert nags == ["!", "!?"]
    assert page.inner_text("#ply-title") == "Start position"
    assert_fits(page)
    shot(page, "phone-02-game")

    page.keyboard.press("ArrowRight")
    fen = page.evaluate("window.__sightline.nodes[1].fen")
    page.click("#copy-fen")
    page.wait_for_function("document.getElementById('share-status').textContent === 'FEN copied'")
    assert page.evaluate("navigator.clipboard.readText()") == fen
    assert page.input_value("#fen-text") == fen
    svg = page.request.get(page.eval_on_selector("#board-svg", "a => a.href"))
    assert svg.ok and svg.headers["content-type"].startswith("image/svg+xml") and b"<svg" in svg.body()
    exported = page.request.get(page.eval_on_selector("#export-pgn", "a => a.href"))
    game = chess.pgn.read_game(io.StringIO(exported.text()))
    assert game.headers["Event"] == "Phone test" and "Best by test" in game.next().comment
    assert all(node.eval() is not None for node in game.mainline())

    page.click("#explorer-open")
    page.wait_for_function("document.querySelectorAll('#att-grid .mini').length === 4", timeout=60_000)
    page.click("#network-open")
    page.wait_for_selector("#network-panel h2")
    assert_fits(page)
    shot(page, "phone-03-explorer")
    assert errors == []
    context.close()
