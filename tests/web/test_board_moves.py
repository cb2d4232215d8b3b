"""The evaluation as people read it (White's view, pawns from the project's formula, the graph
on screen at 1400 x 900, no empty column), and playing on the board of a finished analysis: a dragged move and a clicked promotion become
variations the worker evaluates and searches live; an illegal move gets the server's message;
a PV move previews on hover and adds its line on a click."""

from __future__ import annotations

import pytest

from tests.web.test_browser import browser, live_site, shot  # noqa: F401 - fixtures: a site and Chromium

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ANALYSED = "(id) => { const r = window.__sightline.results.get(id); return !!(r && r.eval && r.search); }"


def square_centre(page, name: str) -> tuple[float, float]:
    box = page.locator("#board svg").bounding_box()
    file, rank = "abcdefgh".index(name[0]), int(name[1]) - 1
    return box["x"] + (file + 0.5) * box["width"] / 8, box["y"] + (7 - rank + 0.5) * box["height"] / 8


def drag(page, start: str, end: str) -> None:
    page.mouse.move(*square_centre(page, start))
    page.mouse.down()
    x, y = square_centre(page, end)
    page.mouse.move(x - 5, y - 5, steps=4)
    page.mouse.move(x, y)
    page.mouse.up()


def submit(page, base: str, text: str, estimate: str = "", search: str = "policy", budget: str = "") -> None:
    page.goto(base)
    page.fill("#id_pgn", text)
    page.select_option("#id_network", "cf-tiny")
    page.select_option("#id_search", search)
    if budget:
        page.fill("#id_budget", budget)
    if estimate:  # the form's cost estimate for this network, search and game
        page.wait_for_function("(words) => document.getElementById('estimate').textContent.includes(words)",
                               arg=estimate)
    page.click("button[type=submit]")
    page.wait_for_url("**/jobs/**")
    page.wait_for_function("window.__sightline && window.__sightline.status.status === 'done'", timeout=120_000)


def current(page) -> dict:
    return page.evaluate("(() => { const g = window.__sightline; return g.nodes[g.current]; })()")


# Where things are, unscrolled: the graph's box, the eval bar label's font size, the root table's columns.
LAYOUT = """() => { const g = document.getElementById('eval-graph').getBoundingClientRect();
  const rows = [...document.querySelectorAll('#root-table tr')].map((tr) => [...tr.children].map((c) => c.textContent));
  return {scrollY: window.scrollY, graphTop: g.top, graphBottom: g.bottom, height: window.innerHeight, rows,
          labelPx: parseFloat(getComputedStyle(document.getElementById('evalbar-label')).fontSize)}; }"""


def check_readable_evaluation(page) -> None:
    """White's view everywhere: pawns from the project's formula, no empty column, the graph on screen."""
    from analysis.evaluator import score_to_centipawns

    page.keyboard.press("Home")
    page.wait_for_function("window.Plotly && document.querySelector('#eval-graph .scatterlayer')")
    layout = page.evaluate(LAYOUT)
    assert layout["scrollY"] == 0 and 0 < layout["graphTop"] and layout["graphBottom"] <= layout["height"], layout
    assert layout["labelPx"] >= 12
    header, *rows = layout["rows"]
    assert rows and all(any(row[i].strip() for row in rows) for i in range(len(header))), layout["rows"]
    assert "Q" not in header and "score" not in header  # policy search: moves and priors only
    white = page.evaluate("window.__sightline.results.score(0)")  # White's, as every value the page holds
    cp = score_to_centipawns(white)
    # With the engine lane on, Stockfish's figure is the headline and the network's sits beside it.
    engine = page.evaluate("window.__sightline.results.engineText(0)")
    text = page.inner_text("#eval-network-figure" if engine else "#eval-big").replace("−", "-")
    assert abs(float(text) * 100 - cp) <= 1 and (text.startswith("+") or cp <= 0), (text, cp)
    if engine:
        assert page.inner_text("#eval-big") == engine and page.inner_text("#eval-big-label") == "Stockfish"
    assert page.inner_text("#evalbar-label") == page.inner_text("#eval-big")
    assert "for White" in page.inner_text("#wdl-text") and "for White" in page.inner_text("#search-info")
    # The WDL bar is the network's, whichever figure heads the page: its words say so.
    assert page.inner_text("#wdl-text").startswith(page.evaluate("window.__sightline.page.network.name") + ": ")


def test_drag_click_promote_and_pv_lines(live_site, browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    submit(page, live_site["base"], "1. e4 e5 2. Nf3 Nc6 *")
    check_readable_evaluation(page)

    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")  # after 1... e5
    drag(page, "f1", "c4")
    page.wait_for_function("window.__sightline.nodes[window.__sightline.current].san === 'Bc4'")
    node = current(page)
    assert node["parent"] == 2 and node["id"] == 5
    page.wait_for_selector('#moves .line.variation .move[data-node="5"]')
    page.wait_for_function(ANALYSED, arg=5, timeout=60_000)  # evaluated and searched by the worker, live
    assert page.inner_text("#ply-title").startswith("2. Bc4")
    assert "waiting" not in page.inner_text("#wdl-text")
    shot(page, "moves-01-dragged")

    drag(page, "e8", "e6")  # the king cannot go two squares forward
    refused = "The black king on e8 cannot move to e6"
    try:
        page.wait_for_function("(words) => document.getElementById('move-status').textContent.includes(words)", arg=refused)
    except Exception as error:  # say what the page showed instead
        raise AssertionError((page.inner_text("#move-status"), current(page))) from error
    assert current(page)["id"] == 5

    # A PV move: hover previews its position, a click adds the line (or goes to it).
    pv = page.locator("#search-info .pv-move").first
    pv.hover()
    page.wait_for_selector("#board.previewing")
    line = pv.get_attribute("data-line").split(" ")
    pv.click()
    page.wait_for_function("(uci) => window.__sightline.nodes[window.__sightline.current].uci === uci", arg=line[0])
    assert current(page)["parent"] == 5
    page.mouse.move(5, 5)
    page.wait_for_selector("#board:not(.previewing)")
    assert not errors, errors

    # A promotion asks for the piece: two clicks, then the knight.
    # By now this site has measured cf-tiny's policy search: the form says what a position costs.
    submit(page, live_site["base"], "8/4P3/8/8/8/8/k7/4K3 w - - 0 1", estimate="this game: 1 position, about")
    assert "measured" in page.evaluate("window.__sightline.page.estimate.basis")
    # Time left: from the rate of finished searches (4 in the last 20 s, 6 to go: 30 s), else the estimate.
    left = page.evaluate("""() => { const g = window.__sightline.statusBar, now = Date.now(); g.rate = [[now - 20000, 0]];
        return [g.secondsLeft(4, 10, now), (g.rate = [], g.secondsLeft(0, 10, now))]; }""")
    per = page.evaluate("window.__sightline.page.estimate.seconds_per_position")
    assert left[0] == pytest.approx(30) and left[1] == pytest.approx(10 * per)
    page.mouse.click(*square_centre(page, "e7"))
    page.mouse.click(*square_centre(page, "e8"))
    page.wait_for_selector("#promotion:not([hidden])")
    shot(page, "moves-02-promotion")
    page.click('#promotion button[data-piece="n"]')
    page.wait_for_function("window.__sightline.nodes[window.__sightline.current].san === 'e8=N'")
    page.wait_for_function(ANALYSED, arg=1, timeout=60_000)
    assert page.locator("#moves .move .san").all_inner_texts() == ["e8=N"]
    assert not errors, errors
    page.close()


SQUARE = "abcdefgh"


def test_explorer_beside_the_board(live_site, browser):  # noqa: F811
    """At 1400 x 900 the explorer opens in the side column, on screen; the arrow keys step through
    the game without scrolling; hover gives a square's value; the matrix has axes, shows every head,
    and in "attends to" mode a click picks the column; the link and the SVG keep the view."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    submit(page, live_site["base"], "1. e4 e5 2. Nf3 Nc6 *")
    page.keyboard.press("ArrowRight")
    page.click("#explorer-open")
    page.wait_for_function("document.querySelectorAll('#att-grid .mini').length === 4", timeout=60_000)
    board, explorer = page.locator("#board").bounding_box(), page.locator("#att-board").bounding_box()
    assert explorer["x"] >= board["x"] + board["width"] and explorer["y"] + explorer["height"] <= 900, explorer
    assert page.is_hidden("#moves-pane")
    for key in ["ArrowRight", "ArrowRight", "ArrowDown", "ArrowLeft", "ArrowUp"]:
        page.keyboard.press(key)
        assert page.evaluate("window.scrollY") == 0, key
    page.wait_for_function("document.querySelector('#att-caption').textContent.includes('Layer 0,')")

    x, y = explorer["x"] + (4 + 0.5) * explorer["width"] / 8, explorer["y"] + (7 - 3 + 0.5) * explorer["height"] / 8
    page.mouse.move(x, y)  # e4
    hover = page.inner_text("#att-hover")
    value = page.evaluate("window.__sightline.explorer.shown[28]")
    assert hover.startswith(f"e4: {value:.4f}"), hover

    page.check('input[name="att-mode"][value="col"]')
    box = page.locator("#att-matrix").bounding_box()
    scale = box["width"] / 408
    page.mouse.click(box["x"] + (24 + 18 * 6 + 3) * scale, box["y"] + box["height"] * 0.7)  # column 18: c3
    page.wait_for_function("document.querySelector('#att-caption').textContent.includes('attend to c3')")
    axis_ink = page.evaluate("""() => { const d = document.getElementById('att-matrix').getContext('2d')
        .getImageData(0, 24, 20, 384).data; let ink = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) ink++; return ink; }""")
    assert axis_ink > 50  # the rank ticks (a1 ... a8) down the left

    page.check("#att-all-heads")
    assert page.locator("#att-matrices canvas").count() == 4 and page.is_hidden("#att-matrix")
    page.locator("#att-matrices canvas").nth(2).click()
    assert page.input_value("#att-head") == "2"
    shot(page, "explorer-beside-board")

    link = page.evaluate("location.href")
    assert "layer=0" in link and "head=2" in link and "query=c3" in link and "mode=col" in link
    svg_url = page.eval_on_selector("#board-svg", "a => a.href")
    assert "query=c3" in svg_url and "head=2" in svg_url
    picture = page.request.get(svg_url)
    from webapp.jobs.boardsvg import colour

    hottest = colour(1.0)[:7].encode()  # the map's own range: its largest value gets the top colour
    assert picture.ok and hottest in picture.body() and b'class="arrow' not in picture.body()

    again = browser.new_page(viewport={"width": 1400, "height": 900})
    again.goto(link)
    again.wait_for_function("document.querySelector('#att-caption').textContent.includes('Layer 0, head 2')", timeout=60_000)
    caption = again.inner_text("#att-caption")
    assert "which squares attend to c3" in caption
    assert again.evaluate("window.__sightline.current") == page.evaluate("window.__sightline.current")
    again.close()
    assert not errors, errors
    page.close()


def test_analyse_this_position_deeper(live_site, browser):  # noqa: F811
    """MCTS on a finished job, then deeper on one position until stopped: live MultiPV lines with
    visits, prior, Q and WDL per move (White's view), and Stop keeps the lines."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    submit(page, live_site["base"], "1. e4 e5 *", search="mcts", budget="16")
    page.keyboard.press("ArrowRight")
    page.select_option("#deeper-budget", "until-stopped")
    page.click("#deeper-start")
    page.wait_for_function("document.getElementById('deeper-status').textContent.startsWith('searching')", timeout=60_000)
    page.wait_for_function("document.querySelectorAll('#deeper-lines tr').length >= 3")
    page.wait_for_function("parseInt(document.getElementById('deeper-status').textContent.split(': ')[1]) > 50")
    header = page.locator("#deeper-lines tr").first.inner_text()
    assert all(word in header for word in ("visits", "prior", "Q (White)", "W / D / L (White)", "line")), header
    shot(page, "deeper-running")
    page.click("#deeper-stop")
    page.wait_for_function("document.getElementById('deeper-status').textContent.startsWith('stopped')", timeout=30_000)
    assert page.is_visible("#deeper-start") and page.is_hidden("#deeper-stop")
    assert page.locator("#deeper-lines tr").count() >= 3
    assert not errors, errors
    page.close()
