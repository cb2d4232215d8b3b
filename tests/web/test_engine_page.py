"""The reference engine on the job page, in Chromium (issue 29): the engine's line in the graph, its
figure and best-move arrow in the panel, the game review per player, the disagreement list's links
and its attention button, the "network's opinion" toggle of the marks, the swing note of a network
whose card measures a side-to-move bias, and a job without the engine saying why."""

from __future__ import annotations

import pytest

from tests.conftest import require_stockfish
from tests.web.test_board_moves import submit
from tests.web.test_browser import browser, live_site, shot  # noqa: F401 - fixtures: a site and Chromium

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# A short game with blunders Stockfish marks (the Blackburne Shilling trap: 4. Nxe5?? and 5. Nxf7??).
TRAP = """[White "Victim"]
[Black "Trapper"]
[Result "0-1"]

1. e4 e5 2. Nf3 Nc6 3. Bc4 Nd4 4. Nxe5 Qg5 5. Nxf7 Qxg2 6. Rf1 Qxe4+ 7. Be2 Nf3# 0-1
"""
SIDE_TO_MOVE_BIAS = 0.08  # above review.SWING_BIAS: the page offers the smoothed line


@pytest.fixture(scope="module")
def tiny_checkpoint(tiny_checkpoint, tmp_path_factory):
    """cf-tiny whose card measures a side-to-move bias (value-quality figures), so its line swings."""
    from analysis.checkpoint_file import read_header, rewrite_metadata

    import dataclasses
    import shutil

    path = tmp_path_factory.mktemp("swing") / "cf-tiny.safetensors"
    shutil.copy(tiny_checkpoint, path)
    meta, _ = read_header(path)
    metrics = {**meta.metrics, "value_quality": {"overall": {"mae": 0.2, "side_to_move_bias": SIDE_TO_MOVE_BIAS}}}
    rewrite_metadata(path, dataclasses.replace(meta, metrics=metrics))
    return path


def pawns(cp: int) -> str:
    """As the page writes centipawns (format.js fmtPawns)."""
    digits = 0 if abs(cp) >= 1000 else 1 if abs(cp) >= 100 else 2
    return f"{'+' if cp > 0 else '−' if cp < 0 else ''}{abs(cp) / 100:.{digits}f}"


GRAPH = """() => { const g = window.__sightline, data = document.getElementById('eval-graph').data || [];
  const engine = data.find((t) => t.meta === 'engine'), network = data.find((t) => t.name.startsWith('network'));
  return { engine: engine ? { name: engine.name, y: engine.y, colour: engine.line.color } : null,
           network: network && network.name, mainline: g.mainline.length,
           stored: g.mainline.map((id) => g.results.engineScore(id)) }; }"""

MARKS = """(view) => { const g = window.__sightline, out = [];
  for (const el of document.querySelectorAll('#moves .move')) {
    const j = g.results.judgement(Number(el.dataset.node), view);
    out.push({ shown: el.querySelector('.glyph').textContent, stored: j ? j.glyph : '', source: j ? j.source : null }); }
  return out; }"""


def test_the_engine_beside_the_network(live_site, browser):
    require_stockfish()
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    submit(page, live_site["base"], TRAP)
    page.wait_for_function("window.__sightline.review.review?.engine?.complete === true", timeout=60_000)

    # The engine's line: its own trace, colour and legend entry, a value at every position.
    page.wait_for_function("document.getElementById('eval-graph').data?.some((t) => t.meta === 'engine')")
    graph = page.evaluate(GRAPH)
    assert graph["engine"]["name"].lower().startswith("stockfish") and graph["engine"]["colour"] == "#7c3aed"
    assert graph["engine"]["y"] == graph["stored"] and None not in graph["engine"]["y"]
    assert len(graph["engine"]["y"]) == graph["mainline"] == 15

    # After 4. Nxe5 (node 7): the engine's figure and win % beside the network's WDL, its best move as
    # its own arrow, and its line as clickable moves.
    page.evaluate("window.__sightline.go(7)")
    engine = page.evaluate("window.__sightline.results.engine(7)")
    assert page.inner_text("#engine-figure") == (f"#{engine['mate']}" if engine["mate"] else pawns(engine["cp"]))
    assert page.inner_text("#engine-win") == f"{engine['win']:.1f}%"
    assert page.inner_text("#engine-best") == engine["best_san"]
    assert page.get_attribute("#board polygon.arrow.engine", "data-move") == engine["best"][:4]
    assert page.locator("#engine-info .engine-pv .pv-move").count() == len(engine["pv_san"]) > 0
    # The move list marks 4. Nxe5 with the engine's mark, in lichess's words.
    judged = page.evaluate("window.__sightline.results.judgement(7)")
    assert judged["source"] == "engine" and judged["glyph"] in ("?", "??")
    assert page.inner_text("#ply-judgement").startswith(f"{judged['glyph']} {judged['name']}")
    shot(page, "engine-01-position")

    # The review under the game: both players, accuracy and the counts, from the engine.
    rows = page.eval_on_selector_all("#review-table tr", "trs => trs.map((tr) => [...tr.children].map((c) => c.textContent))")
    assert "Victim" in rows[0][1] and "Trapper" in rows[0][2]
    labels = [row[0] for row in rows[1:]]
    assert labels == ["Accuracy", "Average centipawn loss", "Inaccuracies", "Mistakes", "Blunders"]
    review = page.evaluate("window.__sightline.review.review.engine")
    assert rows[1][1:] == [f"{review['white']['accuracy']}%", f"{review['black']['accuracy']}%"]
    assert int(rows[5][1]) == review["white"]["blunders"] >= 1  # Nxe5 or Nxf7
    assert "lichess" in page.inner_text("#review-caption")

    # The disagreement list: the largest gap first; its link moves the board there, its button opens
    # the attention explorer there.
    first = page.evaluate("window.__sightline.disagreements.items[0]")
    link = page.locator("#disagreements li").first.locator("a.disagreement-link")
    assert link.get_attribute("href") == f"#{first['node']}"
    page.evaluate("window.__sightline.go(0)")
    link.click()
    page.wait_for_function("(n) => window.__sightline.current === n", arg=first["node"])
    assert not page.is_hidden("#engine-info") and page.inner_text("#wdl-text")
    page.evaluate("window.__sightline.go(0)")
    page.locator("#disagreements li").first.locator("[data-explore]").click()
    page.wait_for_function("(n) => window.__sightline.current === n && !document.getElementById('explorer').hidden",
                           arg=first["node"])
    page.click("#tab-moves")

    # The marks: the engine's by default; the toggle shows the network's own, never in lichess's words.
    engine_marks = page.evaluate(MARKS, "engine")
    assert all(m["shown"] == m["stored"] for m in engine_marks)
    assert any(m["source"] == "engine" and m["shown"] for m in engine_marks)
    engine_legend = page.inner_text("#judgement-legend")
    page.check("#marks-network")
    network_marks = page.evaluate(MARKS, "network")
    assert all(m["shown"] == m["stored"] and m["source"] != "engine" for m in network_marks)
    assert [m["shown"] for m in network_marks] != [m["shown"] for m in engine_marks]
    assert page.inner_text("#judgement-legend") != engine_legend
    page.evaluate("window.__sightline.go(7)")  # 4. Nxe5: the engine's "??" or "?" before the toggle
    heading = page.inner_text("#ply-judgement")
    assert not any(word in heading for word in ("blunder", "mistake", "inaccuracy"))
    assert ("opinion" in heading) == bool(network_marks[6]["shown"])
    page.uncheck("#marks-network")
    assert page.inner_text("#ply-judgement").startswith(f"{judged['glyph']} {judged['name']}")

    # A network whose value swings with the side to move: the graph says so and smooths on request.
    assert page.is_visible("#graph-swing") and "smoothed over two plies" in page.inner_text("#graph-swing-text")
    page.check("#graph-smooth")
    page.wait_for_function("document.getElementById('eval-graph').data.some((t) => t.name === 'network, smoothed over two plies')")
    shot(page, "engine-02-review")
    assert not errors, errors


def test_without_the_engine_the_page_says_why(live_site, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(live_site["base"])
    page.fill("#id_engine_nodes", "0")
    page.fill("#id_pgn", "1. e4 e5 2. Nf3 *")
    page.select_option("#id_network", "cf-tiny")
    page.select_option("#id_search", "policy")
    page.click("button[type=submit]")
    page.wait_for_url("**/jobs/**")
    page.wait_for_function("window.__sightline && window.__sightline.status.status === 'done'", timeout=120_000)
    assert "No engine line" in page.inner_text("#engine-note") and page.is_visible("#engine-note")
    assert "No engine line" in page.inner_text("#review-caption")
    assert page.locator("#review-table tr").count() == 0 and page.is_hidden("#marks-toggle")
    assert page.is_hidden("#disagreements-card")
    assert not page.evaluate("(document.getElementById('eval-graph').data || []).some((t) => t.meta === 'engine')")
