"""End to end: ``manage.py serve`` (embedded Redis, Celery worker, uvicorn) driven by Chromium.

Paste a real game, watch the eval graph fill in live, step through plies with
the keyboard (variations too), click the graph, open the attention explorer,
click a square and see the heatmap change; then Ctrl+C stops everything.
Screenshots go to artifacts/web/.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys

import pytest

from tests.conftest import ROOT, require_chromium
from tests.web.conftest import OPERA_GAME
from tests.web.serve_process import start_serve, stop_serve

ARTIFACTS = ROOT / "artifacts" / "web"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def live_site(tmp_path_factory, tiny_checkpoint):
    """A whole site in a child process, on SQLite and the embedded Redis, with cf-tiny shipped."""
    root = tmp_path_factory.mktemp("site")
    weights = root / "weights"
    weights.mkdir()
    shutil.copy(tiny_checkpoint, weights / "cf-tiny.safetensors")
    process, base, env = start_serve(root, weights, {"SIGHTLINE_BATCH_SIZE": "2"})
    site = {"base": base, "process": process, "root": root, "socket": root / "var" / "redis" / "redis.sock", "env": env}
    yield site
    stop_serve(process)  # the Ctrl+C test did not run or failed: stop it the same way


@pytest.fixture(scope="module")
def browser():
    executable = require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def current_san(page) -> str:
    return page.eval_on_selector("#moves .move.current .san", "e => e.textContent")


def heat(page) -> list[str]:
    return page.eval_on_selector_all("#att-board .heat rect", "rs => rs.map(r => r.getAttribute('fill'))")


# Every glyph on the move list is a stored same-parent judgement (none before one is known), and the
# graph's network line is White's expected score: the stored evaluation (the side to move's, as the
# API's position endpoint gives it), flipped on Black's turns only.
MARKS_AND_WHITE_VIEW = """async () => { const g = window.__sightline, out = {unbacked: [], judged: 0, not_white: []};
  for (const el of document.querySelectorAll('#moves .move')) {
    const j = g.results.get(Number(el.dataset.node))?.judgement;
    if (j) out.judged += 1;
    if (el.querySelector('.glyph').textContent !== ((j && j.glyph) || '')) out.unbacked.push(el.dataset.node); }
  const net = document.getElementById('eval-graph').data?.find((t) => t.name === 'network');
  if (!net) return out;
  for (const [i, id] of g.mainline.entries()) {
    if (net.y[i] == null) continue;
    const stored = (await (await fetch(`/api/jobs/${g.page.id}/nodes/${id}/`)).json()).results.eval.score;
    const white = g.nodes[id].fen.split(' ')[1] === 'w';
    if (Math.abs(net.y[i] - (white ? stored : 1 - stored)) > 1e-9) out.not_white.push(id); }
  return out; }"""


def test_paste_watch_navigate_explore(live_site, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(live_site["base"])
    assert "cf-tiny" in page.inner_text("#id_network") and "[untrained]" in page.inner_text("#id_network")
    shot(page, "01-home")

    # A bad paste first: the message appears in place, nothing navigates.
    page.fill("#id_pgn", "1. e4 e5 2. Ke3")
    page.click("button[type=submit]")
    page.wait_for_selector("text=Ply 3 (2. Ke3): illegal move")
    shot(page, "02-home-error")

    page.fill("#id_pgn", OPERA_GAME)
    page.select_option("#id_network", "cf-tiny")
    page.select_option("#id_search", "mcts")
    page.fill("#id_budget", "64")
    page.click("button[type=submit]")
    page.wait_for_url("**/jobs/**")
    page.wait_for_function("window.__sightline && window.__sightline.results.size > 0", timeout=60_000)
    assert page.evaluate(MARKS_AND_WHITE_VIEW)["unbacked"] == []  # (the graph redraws a frame later)
    page.wait_for_function("window.__sightline && window.__sightline.status.status === 'done'", timeout=120_000)
    game = page.evaluate("({history: window.__sightline.graph.history, main: window.__sightline.mainline.length,"
                         " points: window.__sightline.graph.points, messages: window.__sightline.messages})")
    assert game["points"] == game["main"] == 34
    # The graph filled in live: it was drawn with some but not all of the search's points.
    assert any(0 < searched < game["main"] for _, searched in game["history"]), game["history"]
    assert game["history"][-1] == [34, 34]
    assert game["messages"] > 34
    assert page.inner_text("#job-status") == "done"
    assert page.locator("#eval-graph .scatterlayer .trace").count() >= 2
    assert page.evaluate(MARKS_AND_WHITE_VIEW) == {"unbacked": [], "judged": 35, "not_white": []}
    # The marks are the reference engine's by default; the network's own are under the toggle.
    assert "the reference engine's" in page.inner_text("#judgement-legend")
    page.check("#marks-network")
    assert "both valued by mcts" in page.inner_text("#judgement-legend")
    page.uncheck("#marks-network")
    # The site ran the suite itself when it registered the untrained cf-tiny (CSS upper-cases badges).
    assert page.inner_text(".net-chip .badge-value") == "VALUE FAILS THE SANITY SUITE"
    shot(page, "03-game-done")

    # Keyboard: Home, Right x3, then into the 3... exd4 variation with Down, End of that line.
    page.keyboard.press("Home")
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    assert current_san(page) == "Nf3"
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    assert current_san(page) == "Bg4"
    page.keyboard.press("ArrowDown")
    assert current_san(page) == "exd4"
    page.keyboard.press("End")
    assert current_san(page) == "Nxd4"
    assert page.inner_text("#ply-title") == "4. Nxd4"
    page.keyboard.press("ArrowUp")  # Nxd4 has no alternatives: stays
    assert current_san(page) == "Nxd4"
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowUp")  # back from the variation to the main-line move
    assert current_san(page) == "Bg4"
    page.keyboard.press("End")
    assert current_san(page) == "Rd8#"
    page.goto(page.url.split("#")[0] + "#33")
    page.wait_for_function("window.__sightline && window.__sightline.current === 33")
    assert current_san(page) == "Rd8#"
    assert page.locator("#policy-bars .bar-row").count() == 0  # checkmate: no legal moves
    # The rules decide a finished game: the bar and text show White's win, not the network's guess.
    assert page.inner_text("#wdl-text").startswith("Checkmate: White wins")
    assert page.inner_text("#evalbar-label") == "1-0"
    page.keyboard.press("ArrowLeft")
    assert page.locator("#policy-bars .bar-row").count() == 8
    assert page.locator("#board .arrows polygon").count() >= 1
    assert "visits" in page.inner_text("#root-table")
    page.keyboard.press("f")
    shot(page, "04-game-keyboard-flipped")
    page.keyboard.press("f")

    # Clicking the graph jumps to that ply.
    before = page.evaluate("window.__sightline.current")
    page.locator("#eval-graph").scroll_into_view_if_needed()
    box = page.locator("#eval-graph .nsewdrag").first.bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.5)
    page.wait_for_function(f"window.__sightline.current !== {before}")

    # The explorer: attention for the shown ply, fetched on demand.
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    page.click("#explorer-open")
    page.wait_for_function("document.querySelectorAll('#att-grid .mini').length === 4", timeout=60_000)
    page.wait_for_function("document.querySelector('#att-caption').textContent.includes('Layer 0,')")
    first = heat(page)
    assert len(set(first)) > 4  # a real heatmap, not one colour
    shot(page, "05-explorer")
    page.click('#att-board rect[data-square="b8"]')
    page.wait_for_function("document.querySelector('#att-caption').textContent.includes('b8')")
    second = heat(page)
    assert second != first
    page.check('input[name="att-mode"][value="col"]')
    assert heat(page) != second
    page.select_option("#att-layer", index=1)
    page.wait_for_function("document.querySelector('#att-caption').textContent.includes('Layer 1,')")
    page.select_option("#att-head", index=3)  # after "mean of heads"
    assert "Layer 1, head 2" in page.inner_text("#att-caption")
    shot(page, "06-explorer-column-layer2")
    # Colour scales: probabilities 0..1, then shared by the layer's heads.
    own = heat(page)
    page.select_option("#att-scale", "absolute")
    assert page.inner_text("#legend-max") == "1.000" and heat(page) != own
    page.select_option("#att-scale", "layer")
    assert float(page.inner_text("#legend-min")) == 0 and heat(page) != own
    # The full 64 x 64 matrix: drawn, and in "attends to" mode clicking column 0 makes a1 the query.
    colours = page.evaluate("""() => { const c = document.getElementById('att-matrix'), d = c.getContext('2d')
        .getImageData(0, 0, c.width, c.height).data, seen = new Set();
        for (let i = 0; i < d.length; i += 4 * 97) seen.add(d[i] + ',' + d[i + 1] + ',' + d[i + 2]); return seen.size; }""")
    assert colours > 4
    box = page.locator("#att-matrix").bounding_box()
    scale = box["width"] / 408  # the canvas: a 24-pixel axis margin, then 64 cells of 6
    page.mouse.click(box["x"] + (24 + 3) * scale, box["y"] + box["height"] / 2)
    page.wait_for_function("document.querySelector('#att-caption').textContent.includes('a1')")
    shot(page, "07-explorer-matrix")

    # The network panel says what the network is, untrained included.
    page.click("#network-open")
    page.wait_for_selector("#network-panel .badge-untrained")
    assert "cf-tiny" in page.inner_text("#network-panel")

    # A page opened after the job finished renders the stored state at once.
    late = browser.new_page(viewport={"width": 1400, "height": 1000})
    late.goto(page.url.split("#")[0])
    late.wait_for_function("window.__sightline && window.__sightline.graph.points === 34", timeout=20_000)
    late.close()
    assert errors == []
    page.close()


def test_head_atlas_and_the_jump_to_a_head(live_site, browser):
    """cf-tiny is untrained, so serve queued no atlas for it: the page's button queues one, the
    page shows its progress, then the grid; a cell opens the explorer on its head, and "show me"
    outlines the head's pattern."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(live_site["base"] + "networks/cf-tiny/heads/")
    page.click("#atlas-compute")
    page.wait_for_function("document.querySelectorAll('.atlas-cell').length === 8", timeout=180_000)
    page.wait_for_selector("#atlas-chart .main-svg")  # the plotly chart of labels per layer
    labels = page.eval_on_selector_all(".atlas-cell", "cells => cells.map(c => c.dataset.label)")
    if set(labels) == {"unlabelled"}:
        # An untrained cf-tiny may have no labelled head, and "show me" needs a pattern: label its
        # last head in the stored atlas (labelling itself is tested in tests/test_heads.py).
        _relabel_head(live_site, "cf-tiny", len(labels) - 1, "knight-moves")
        page.reload()
        page.wait_for_function("document.querySelectorAll('.atlas-cell').length === 8")
        labels = page.eval_on_selector_all(".atlas-cell", "cells => cells.map(c => c.dataset.label)")
        assert labels[-1] == "knight-moves"
    page.select_option("#atlas-filter", labels[0])
    assert page.locator(".atlas-cell.dimmed").count() == sum(label != labels[0] for label in labels)
    page.select_option("#atlas-filter", "")
    shot(page, "08-head-atlas")
    index = next(i for i, label in enumerate(labels) if label != "unlabelled")  # show me needs a pattern
    cell = page.locator(".atlas-cell").nth(index)
    layer, head = (int(x) for x in cell.get_attribute("value").split("."))
    cell.click()
    page.wait_for_url("**/jobs/**")
    page.wait_for_function("document.querySelectorAll('#att-grid .mini').length === 4", timeout=60_000)
    page.wait_for_function(f"document.querySelector('#att-caption').textContent.includes('Layer {layer}, head {head} ({labels[index]})')")
    assert page.input_value("#att-layer") == str(layer) and page.input_value("#att-head") == str(head)
    assert labels[index] in page.inner_text("#att-head option:checked")
    page.wait_for_function("document.querySelector('#att-caption').textContent.includes('Outlined')")
    assert page.locator("#att-board rect.pattern").count() > 0
    assert page.is_visible("#att-showme")
    shot(page, "09-explorer-from-atlas")
    assert errors == []
    page.close()


def _relabel_head(site, network: str, index: int, label: str) -> None:
    """Set one head's label in the running site's stored atlas (its own database, through manage.py)."""
    code = ("from webapp.networks.models import HeadAtlas; "
            f"row = HeadAtlas.objects.get(network__name={network!r}); heads = row.data['heads']; "
            f"row.data['labels'][{index} // heads][{index} % heads] = {label!r}; row.save()")
    subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=site["env"], check=True,
                   capture_output=True, timeout=120)


# Opens a websocket, sends ``text`` once open (unless null), and resolves with the close code
# and the kinds of the messages that arrived before it.
CLOSE_CODE_JS = """([url, text]) => new Promise((resolve) => {
  const ws = new WebSocket(url), kinds = [];
  ws.onopen = () => { if (text !== null) ws.send(text); };
  ws.onmessage = (e) => kinds.push(JSON.parse(e.data).kind);
  ws.onclose = (e) => resolve({code: e.code, kinds});
})"""


def test_websocket_close_codes_on_the_running_server(live_site, browser):
    page = browser.new_page()
    page.goto(live_site["base"])
    page.fill("#id_fen", "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1")
    page.select_option("#id_search", "policy")
    page.click("button[type=submit]")
    page.wait_for_url("**/jobs/**")
    ws = live_site["base"].replace("http://", "ws://") + "ws/jobs/"
    job_ws = ws + page.url.split("/jobs/")[1].split("/")[0] + "/"
    # A missing job: accepted, then 4404 (daphne once answered the handshake with 403).
    assert page.evaluate(CLOSE_CODE_JS, [ws + "00000000-0000-0000-0000-000000000000/", None])["code"] == 4404
    # Too long for the consumer: it says why, then closes 4413.
    assert _closed_after_error(page.evaluate(CLOSE_CODE_JS, [job_ws, "x" * 2000])) == 4413
    # Too long for the server: uvicorn (--ws-max-size) closes the connection before the application
    # sees the message (1009, or 1006 where no close frame reaches the browser).
    refused = page.evaluate(CLOSE_CODE_JS, [job_ws, "x" * 10_000])
    assert refused["code"] in (1006, 1009) and "error" not in refused["kinds"]
    assert _closed_after_error(page.evaluate(CLOSE_CODE_JS, [job_ws, "{not json"])) == 4400
    page.close()


def _closed_after_error(result: dict) -> int:
    """The close code, after checking the socket got its snapshot first and one error last.

    The job is still running, so its live messages may arrive between the two.
    """
    kinds = result["kinds"]
    assert kinds[0] == "snapshot" and kinds[-1] == "error" and kinds.count("error") == 1, kinds
    return result["code"]


def test_ctrl_c_stops_everything(live_site):
    import redis

    process = live_site["process"]
    os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl+C does
    assert process.wait(timeout=60) == 0, (live_site["root"] / "serve.log").read_text()[-3000:]
    with pytest.raises(redis.ConnectionError):
        redis.Redis(unix_socket_path=str(live_site["socket"]), socket_timeout=1).ping()
    log = (live_site["root"] / "serve.log").read_text()
    assert "stopped" in log
