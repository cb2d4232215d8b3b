"""A Redis outage seen from a real page: ``manage.py serve`` driven by Chromium.

While a job runs, the site's Redis is killed and kept down for a few seconds (``serve`` is
paused so that its supervisor does not restart Redis at once). The server tells the page and
closes its socket with 1013; the page's htmx websocket extension reconnects with a back-off
that grows while the outage lasts; once Redis is back the page gets a snapshot with the plies
the worker stored in the meantime, then the job's later messages live, and ends complete
without falling back to fetching the state over HTTP.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

import psutil
import pytest

from tests.conftest import require_chromium
from tests.web.conftest import OPERA_GAME, free_port

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OUTAGE_S = 6.0

# Everything the page's websocket does, from the test's side: messages (with the nodes they
# carry), opens and closes (with the close code), each with its time.
RECORD_JS = """() => { window.__log = []; const log = (e) => window.__log.push({...e, at: Date.now()});
  document.body.addEventListener('htmx:wsBeforeMessage', (ev) => { const m = JSON.parse(ev.detail.message);
    const nodes = m.kind === 'snapshot' ? Object.keys(m.results || {}).map(Number)
                : m.kind === 'ply' ? [m.node] : (m.items || []).map((i) => i.node);
    log({kind: m.kind, nodes, status: m.kind === 'snapshot' ? m.job?.status : m.status}); });
  document.body.addEventListener('htmx:wsOpen', () => log({kind: 'open'}));
  document.body.addEventListener('htmx:wsClose', (ev) => log({kind: 'close', code: ev.detail.event.code})); }"""


@pytest.fixture(scope="module")
def site(tmp_path_factory, tiny_checkpoint):
    root = tmp_path_factory.mktemp("site")
    weights = root / "weights"
    weights.mkdir()
    shutil.copy(tiny_checkpoint, weights / "cf-tiny.safetensors")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")}
    env.update(SIGHTLINE_VAR_DIR=str(root / "var"), SIGHTLINE_WEIGHTS_DIR=str(weights), SIGHTLINE_BATCH_SIZE="2",
               SIGHTLINE_LIVE_CHECK_S="0.5", PYTHONUNBUFFERED="1")
    log = (root / "serve.log").open("w")
    process = subprocess.Popen([sys.executable, "manage.py", "serve", "--port", str(port)],
                               cwd=os.getcwd(), env=env, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    base = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 300  # a loaded 2-core machine took over 2 minutes to start serve
    while True:
        try:
            with urllib.request.urlopen(base, timeout=2) as response:
                if response.status == 200:
                    break
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            os.killpg(process.pid, signal.SIGINT)
            process.wait(60)
            pytest.fail(f"serve did not come up:\n{(root / 'serve.log').read_text()[-4000:]}")
        time.sleep(0.3)
    yield {"base": base, "process": process, "log": root / "serve.log"}
    os.kill(process.pid, signal.SIGCONT)
    os.killpg(process.pid, signal.SIGINT)
    try:
        process.wait(60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def browser():
    executable = require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


def redis_child(serve: subprocess.Popen) -> psutil.Process:
    for child in psutil.Process(serve.pid).children(recursive=True):
        if "redis-server" in " ".join(child.cmdline()) or child.name().startswith("redis"):
            return child
    raise AssertionError("no Redis under serve")


def test_page_reconnects_after_1013_and_recovers_state(site, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors, state_fetches = [], []
    page.on("pageerror", lambda e: errors.append(str(e)))
    # The page's fallback for gaps (GamePage.reconcile) fetches /api/jobs/<id>/: it must not be needed.
    page.on("request", lambda r: state_fetches.append(r.url) if re.search(r"/api/jobs/[^/]+/$", r.url) else None)
    page.goto(site["base"])
    page.fill("#id_pgn", OPERA_GAME)
    page.select_option("#id_network", "cf-tiny")
    page.select_option("#id_search", "mcts")
    # Long enough to outlast the outage and the grown back-off (up to 16 s after Redis is back)
    # on a quiet machine: at 400 nodes the job could finish before the page reconnected, and
    # then no live message follows the last snapshot.
    page.fill("#id_budget", "1500")
    page.click("button[type=submit]")
    page.wait_for_url("**/jobs/**")
    page.evaluate(RECORD_JS)
    page.wait_for_function("window.__sightline && window.__sightline.results.size >= 2", timeout=120_000)
    plies = page.evaluate("window.__sightline.mainline.length")
    assert page.evaluate("window.__sightline.status.status") == "running"

    # The outage: Redis killed, and serve paused so that it is not restarted for OUTAGE_S.
    redis = redis_child(site["process"])
    os.kill(site["process"].pid, signal.SIGSTOP)
    redis.kill()
    killed_at = page.evaluate("Date.now()")
    try:
        page.wait_for_function("window.__log.some((e) => e.kind === 'close' && e.code === 1013)", timeout=15_000)
        assert page.evaluate("document.body.classList.contains('ws-down')")
        time.sleep(OUTAGE_S)
    finally:
        os.kill(site["process"].pid, signal.SIGCONT)  # serve restarts Redis (back-off ~1 s)
    back_at = page.evaluate("Date.now()")

    # Live again: a connection that opened after Redis came back and was not closed, whose snapshot
    # is followed by live messages; then the job finishes on the page.
    page.wait_for_function("""() => { const l = window.__log, i = l.map((e) => e.kind).lastIndexOf('snapshot');
        return i >= 0 && !l.slice(i).some((e) => e.kind === 'close')
            && l.slice(i + 1).some((e) => ['ply', 'plies', 'judgements', 'status', 'progress'].includes(e.kind)); }""",
                           timeout=60_000)
    page.wait_for_function("window.__sightline.status.status === 'done'", timeout=600_000)
    log = page.evaluate("window.__log")
    closes = [e for e in log if e["kind"] == "close"]
    assert closes and all(e["code"] == 1013 for e in closes), closes
    assert not page.evaluate("document.body.classList.contains('ws-down')")

    # The back-off grows while Redis is away (a reconnect is accepted, gets its snapshot, then 1013
    # again, so htmx's own retry count started over at every attempt): a few tries, not one every
    # half second.
    during = [e for e in log if e["kind"] == "open" and killed_at <= e["at"] <= back_at]
    assert 1 <= len(during) <= 4, [(e["kind"], e["at"] - killed_at) for e in log]

    # The reconnects' snapshots hold plies that no message brought before the 1013 (the worker
    # stored them while Redis was down): the page caught up from the database.
    first_close = next(i for i, e in enumerate(log) if e["kind"] == "close")
    last_snapshot = max(i for i, e in enumerate(log) if e["kind"] == "snapshot")
    before_close = {n for e in log[:first_close] if e["kind"] in ("ply", "plies", "snapshot") for n in e["nodes"]}
    caught_up = {n for e in log[first_close:] if e["kind"] == "snapshot" for n in e["nodes"]}
    assert caught_up - before_close, [(e["kind"], e.get("code"), len(e.get("nodes") or [])) for e in log]
    assert set(log[last_snapshot]["nodes"]) >= before_close
    # ...and later messages arrived live on that connection.
    assert any(e["kind"] in ("ply", "plies") for e in log[last_snapshot + 1:])
    assert [e["status"] for e in log[last_snapshot + 1:] if e["kind"] == "status"][-1] == "done"

    # Every position has its result, with no HTTP fetch of the state to fill gaps.
    complete = page.evaluate("""() => window.__sightline.nodes.every((n) => {
        const r = window.__sightline.results.get(n.id); return r && r.eval && r.search; })""")
    assert complete and plies == 34
    assert state_fetches == []
    assert errors == []
    page.close()
