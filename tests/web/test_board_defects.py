"""The game page's defects a new user hit (issue 29), in Chromium against a live server: a job made
from the browser's own form (so it may add moves), analysed here with the material baseline."""

from __future__ import annotations

import pytest

from tests.web.test_browser import browser, shot  # noqa: F401 - fixture: Chromium
from tests.web.test_phone import PHONE, assert_fits
from webapp.jobs.models import AnalysisJob

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("orm_beside_playwright")]

# Scholar's mate with the PGN's own marks: 3. Qh5? is also judged by Sightline, 3...Nf6?? is the blunder.
SCHOLAR = '[White "A"] [Black "B"]\n\n1. e4 e5 2. Bc4 Nc6 3. Qh5? Nf6?? 4. Qxf7# 1-0\n'


def analyse(page, base: str, monkeypatch, pgn: str = "", fen: str = "") -> AnalysisJob:
    """Start a job from the form (this browser owns it), run it here, and open its page analysed."""
    from webapp.jobs.run.runner import JobRun
    from webapp.networks.model_cache import ModelCache

    monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: None)
    page.goto(base + "/")
    page.select_option("#id_network", "material")
    page.fill("#id_fen" if fen else "#id_pgn", fen or pgn)
    page.click("button[type=submit]")
    page.wait_for_url("**/jobs/**")
    job = AnalysisJob.objects.order_by("-created_at").first()
    JobRun(job, ModelCache().get(job.network), lambda kind, payload: None).run()
    page.reload()
    page.wait_for_function("() => window.__sightline && window.__sightline.results.size > 0")
    return AnalysisJob.objects.get(pk=job.pk)


def node_of(job: AnalysisJob, san: str) -> int:
    return next(n["id"] for n in job.nodes if n["san"] == san)


def test_board_defects_on_a_game(live_server, transactional_db, material_network, browser, monkeypatch):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    job = analyse(page, live_server.url, monkeypatch, SCHOLAR)

    # An edited #n moves the board.
    page.evaluate(f"location.hash = '#{node_of(job, 'Bc4')}'")
    page.wait_for_function("() => document.querySelector('#moves .move.current .san')?.textContent === 'Bc4'")
    assert page.input_value("#fen-text") == job.nodes[node_of(job, "Bc4")]["fen"]

    # At the mate in one, the search line shows the mate; at the mate itself the rules speak.
    page.evaluate(f"window.__sightline.go({node_of(job, 'Nf6')})")
    info = page.inner_text("#search-info")
    assert "#1 (White mates in 1)" in info and "100.0% for White" not in info, info
    assert page.inner_text("#evalbar-label") == "#1"
    page.evaluate(f"window.__sightline.go({node_of(job, 'Qxf7#')})")
    assert "checkmate" in page.inner_text("#search-info")

    # The PGN's "?" and Sightline's mark do not run together.
    qh5 = page.locator(f"#moves .move[data-node='{node_of(job, 'Qh5')}']")
    nag, glyph = qh5.locator(".nag"), qh5.locator(".glyph")
    assert nag.inner_text() == "?"
    if glyph.inner_text():
        assert glyph.bounding_box()["x"] >= nag.bounding_box()["x"] + nag.bounding_box()["width"] + 3

    # The legend names each kind of mark drawn, never "mistakes" for all three colours.
    page.wait_for_function("() => document.querySelector('#eval-graph .legend .legendtext')")
    legend = " | ".join(page.eval_on_selector_all("#eval-graph .legend .legendtext", "ts => ts.map((t) => t.textContent)"))
    assert "mistakes" not in legend
    judgements = page.evaluate("() => [...window.__sightline.results.values()].map((r) => r.judgement || null)")
    for glyph_text, name in (("?!", "inaccuracy"), ("?", "mistake"), ("??", "blunder")):
        sources = {j.get("source") for j in judgements if j and j.get("glyph") == glyph_text}
        words = name if "engine" in sources else "network's opinion"  # lichess's words for the engine's marks only
        assert (f"{glyph_text} {words}" in legend) == bool(sources), (legend, glyph_text)

    # A move added by the owner: "analysing" until its results are in, then the line goes.
    page.evaluate(f"window.__sightline.go({node_of(job, 'Bc4')})")
    page.evaluate(f"window.__sightline.player.addLine({node_of(job, 'Bc4')}, ['g8f6'])")
    page.wait_for_function("() => document.getElementById('move-status').textContent.includes('analysing')")
    from webapp.jobs.run.runner import JobRun
    from webapp.networks.model_cache import ModelCache

    JobRun(AnalysisJob.objects.get(pk=job.pk), ModelCache().get(job.network), lambda kind, payload: None).run()
    # What the socket's reconnect snapshot brings (this test server has no websockets).
    page.evaluate("async () => { const g = window.__sightline;"
                  " g.onSnapshot(await (await fetch(g.page.urls.state)).json()); }")
    page.wait_for_function("() => document.getElementById('move-status').textContent === ''")
    shot(page, "defects-game-1400")
    assert errors == []


def test_a_single_positions_graph(live_server, transactional_db, material_network, browser, monkeypatch):  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    analyse(page, live_server.url, monkeypatch, fen="4k3/8/8/8/8/8/4P3/4K3 w - - 0 10")
    page.wait_for_function("() => document.querySelector('#eval-graph .main-svg')")
    ticks = page.eval_on_selector_all("#eval-graph .xtick text", "ts => ts.map((t) => t.textContent)")
    assert ticks == [] and "single position" in page.inner_text("#eval-graph")
    shot(page, "defects-single-position")


def test_the_game_page_on_a_phone(live_server, transactional_db, material_network, browser, monkeypatch):  # noqa: F811
    """390 px: the position panel comes before the graph."""
    page = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
    analyse(page, live_server.url, monkeypatch, SCHOLAR)
    panel, graph = (page.locator(sel).bounding_box() for sel in ("#ply-panel", "#eval-graph"))
    assert panel["y"] < graph["y"], (panel, graph)
    assert_fits(page)
    page.click("#network-open")  # the side column keeps the screen's width with the model card open
    page.wait_for_selector("#network-panel .model-card")
    assert_fits(page)
    shot(page, "defects-phone-game")


@pytest.fixture
def cf_small(transactional_db):
    from django.core.management import call_command

    from tests.conftest import ROOT
    from webapp.networks.registry import register_checkpoint

    network = register_checkpoint(ROOT / "weights" / "cf-small.safetensors", "cf-small")
    call_command("head_atlas", network.name, "--positions", "8", stdout=open("/dev/null", "w"))
    return network


def run_attention_here(monkeypatch):
    """No workers beside this test server: an attention map asked for is computed at once, here."""
    from webapp.lens import tasks

    def send(name, args, queue, task_id=None):
        if name == "sightline.compute_attention":
            tasks.compute_attention.run(*args)
    monkeypatch.setattr("workers.dispatch.send_task", send)


def test_the_explorer_and_the_atlas_on_a_phone(live_server, cf_small, material_network, browser, monkeypatch):  # noqa: F811
    """390 px: the explorer's board is as wide as the screen allows and its head boards do not stack
    into a tall column; the atlas shows all 8 columns and whole labels."""
    from webapp.jobs.run.runner import JobRun
    from webapp.networks.model_cache import ModelCache

    page = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
    page.goto(live_server.url + "/")
    page.select_option("#id_network", "cf-small")
    page.select_option("#id_search", "policy")
    page.fill("#id_pgn", SCHOLAR)
    monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: None)
    page.click("button[type=submit]")
    page.wait_for_url("**/jobs/**")
    job = AnalysisJob.objects.get()
    JobRun(job, ModelCache().get(cf_small), lambda kind, payload: None).run()
    run_attention_here(monkeypatch)
    page.reload()
    page.click("#explorer-open")
    page.wait_for_function("() => document.querySelectorAll('#att-grid .mini').length === 8")
    board, grid = page.locator("#att-board").bounding_box(), page.locator("#att-grid").bounding_box()
    assert board["width"] >= 300, board
    assert grid["height"] < 600, grid
    assert_fits(page)
    shot(page, "defects-phone-explorer")

    page.goto(f"{live_server.url}/networks/cf-small/heads/")
    cells = page.eval_on_selector_all(".atlas-cell", """cs => cs.map((c) => { const r = c.getBoundingClientRect(),
        l = c.querySelector('.atlas-label'); return [r.right, l ? l.scrollWidth - l.clientWidth : 0]; })""")
    assert len(cells) == 48
    assert max(right for right, _ in cells) <= PHONE["width"] and max(cut for _, cut in cells) <= 0, cells
    shot(page, "defects-phone-atlas")


def test_a_visitor_explores_in_a_copy(live_server, transactional_db, material_network, browser, monkeypatch):  # noqa: F811
    owner = browser.new_page(viewport={"width": 1400, "height": 1000})
    job = analyse(owner, live_server.url, monkeypatch, SCHOLAR)
    visitor = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    visitor.goto(f"{live_server.url}/jobs/{job.id}/#{node_of(job, 'Bc4')}")
    visitor.wait_for_function("() => window.__sightline")
    assert visitor.evaluate("window.__sightline.page.can_add_moves") is False
    visitor.click("#fork-btn")
    visitor.wait_for_url(f"**/#{node_of(job, 'Bc4')}")
    copy = AnalysisJob.objects.exclude(pk=job.pk).get()
    assert str(copy.id) in visitor.url and visitor.evaluate("window.__sightline.page.can_add_moves") is True
    visitor.evaluate(f"window.__sightline.player.addLine({node_of(job, 'Bc4')}, ['g8f6'])")
    visitor.wait_for_function("() => document.getElementById('move-status').textContent.includes('added Nf6')")
    assert len(AnalysisJob.objects.get(pk=copy.pk).nodes) == len(job.nodes) + 1
    assert AnalysisJob.objects.get(pk=job.pk).nodes == job.nodes
