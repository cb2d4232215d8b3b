"""A Redis outage seen from a real page: ``manage.py serve`` driven by Chromium.

While a job runs, the site's Redis is killed and kept down (``serve`` is paused so that its
supervisor does not restart Redis) until the worker has stored at least one more searched
position in the database, which no message can have brought to the page. The server tells
the page and closes its socket with 1013; the page's htmx websocket extension reconnects with
a back-off that grows while the outage lasts; once Redis is back the page gets a snapshot with
the plies the worker stored in the meantime, then the job's later messages live, and ends
complete without falling back to fetching the state over HTTP.

The outage waits on the database, not the clock: how long a ply takes depends on the machine.
So does whether the job is still running after the page's grown back-off: the worker is paused
from the end of the outage until the page holds a snapshot on a connection that stayed open, so
that live messages are bound to follow it however fast the worker is.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import signal
import sqlite3
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

# A real worker runs a whole game: minutes on a loaded machine (each wait below has its own deadline).
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(900)]

OUTAGE_S = 6.0  # at least this long, and until the worker has stored a search while Redis was down
STORED_WHILE_DOWN_S = 180.0  # a worker that stores nothing for this long with Redis down is stuck

# Everything the page's websocket does, from the test's side: messages (with the nodes they
# carry), opens and closes (with the close code), each with its time.
RECORD_JS = """() => { window.__log = []; const log = (e) => window.__log.push({...e, at: Date.now()});
  document.body.addEventListener('htmx:wsBeforeMessage', (ev) => { const m = JSON.parse(ev.detail.message);
    const nodes = m.kind === 'snapshot' ? Object.keys(m.results || {}).map(Number)
                : m.kind === 'ply' ? [m.node] : (m.items || []).map((i) => i.node);
    const searched = m.kind === 'snapshot' ? Object.entries(m.results || {}).filter(([, r]) => r.search).map(([n]) => Number(n))
                   : m.kind === 'ply' && m.search ? [m.node] : [];
    log({kind: m.kind, nodes, searched, status: m.kind === 'snapshot' ? m.job?.status : m.status}); });
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
    yield {"base": base, "process": process, "log": root / "serve.log", "db": root / "var" / "sightline.sqlite3"}
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


def worker_processes(serve: subprocess.Popen) -> list[psutil.Process]:
    """The Celery worker ``serve`` started, with its children (Stockfish). The killed Redis is a
    zombie until serve, paused, reaps it: it has no command line to read."""
    for child in psutil.Process(serve.pid).children():
        if child.status() != psutil.STATUS_ZOMBIE and "celery" in " ".join(child.cmdline()):
            return [child, *child.children(recursive=True)]
    raise AssertionError("no Celery worker under serve")


def searched_in_db(db, job_id: str) -> int:
    """The job's ``searched`` count as the worker committed it (read-only; serve may be paused)."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as connection:
        row = connection.execute("SELECT searched FROM analyses_analysisjob WHERE id = ?",
                                 (job_id.replace("-", ""),)).fetchone()
    assert row is not None, f"job {job_id} not in {db}"
    return row[0]


def wait_or_show_log(page, condition: str, timeout_ms: int, since: int) -> None:
    """``page.wait_for_function``, failing with what the socket did since ``since`` (page ms)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(condition, timeout=timeout_ms)
    except PlaywrightTimeout:
        log = page.evaluate("window.__log")
        raise AssertionError(f"timed out after {timeout_ms} ms waiting for {condition!r}; the socket did: "
                             f"{[(e['kind'], e.get('code'), e.get('status'), e['at'] - since) for e in log]}") from None


def most_reconnects(outage_s: float) -> int:
    """Opens a doubling back-off (1 s, 2 s, 4 s, ..., each jittered to 0.5-1x) allows in an outage:
    k tries need at least 0.5 * (2**k - 1) s; plus the first, immediate one. Half-second retries
    would give 2 per second instead."""
    return math.floor(math.log2(2 * outage_s + 1)) + 1


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
    # 34 plies at 800 nodes: long enough that searches are still running after the outage and the
    # grown back-off (up to 16 s after Redis is back), so live messages follow the last snapshot.
    page.fill("#id_budget", "800")
    page.click("button[type=submit]")
    page.wait_for_url("**/jobs/**")
    job_id = re.search(r"/jobs/([0-9a-f-]{36})/", page.url).group(1)
    page.evaluate(RECORD_JS)
    page.wait_for_function("window.__sightline && window.__sightline.results.size >= 2", timeout=120_000)
    plies = page.evaluate("window.__sightline.mainline.length")
    assert page.evaluate("window.__sightline.status.status") == "running"

    # The outage: Redis killed, and serve paused so that it is not restarted for OUTAGE_S.
    redis = redis_child(site["process"])
    os.kill(site["process"].pid, signal.SIGSTOP)
    redis.kill()
    killed_at, down_since = page.evaluate("Date.now()"), time.monotonic()
    searched_at_kill = searched_in_db(site["db"], job_id)
    worker = []
    try:
        page.wait_for_function("window.__log.some((e) => e.kind === 'close' && e.code === 1013)", timeout=15_000)
        assert page.evaluate("document.body.classList.contains('ws-down')")
        # Redis stays down until a search is committed that no message can have carried.
        while time.monotonic() - down_since < OUTAGE_S or searched_in_db(site["db"], job_id) <= searched_at_kill:
            assert time.monotonic() - down_since < STORED_WHILE_DOWN_S, \
                f"the worker stored no search in {STORED_WHILE_DOWN_S:.0f} s with Redis down"
            time.sleep(0.5)
        # Paused until the page has its snapshot, the worker cannot finish the job while the page
        # waits out its back-off (a fast machine did: no live message followed the last snapshot).
        worker = worker_processes(site["process"])
        for process in worker:
            process.suspend()
    finally:
        os.kill(site["process"].pid, signal.SIGCONT)  # serve restarts Redis (back-off ~1 s)

    # Live again: a connection that opened after Redis came back and is still open 2 s after its
    # snapshot (a join that failed closes at once); then the worker goes on, its messages follow
    # that snapshot live, and the job finishes on the page.
    try:
        back_at = page.evaluate("Date.now()")
        wait_or_show_log(page, """() => { const l = window.__log, i = l.map((e) => e.kind).lastIndexOf('snapshot');
            return i >= 0 && l[i].at > %d && Date.now() - l[i].at > 2000 && !l.slice(i).some((e) => e.kind === 'close'); }"""
                         % back_at, 90_000, since=killed_at)
    finally:
        for process in worker:
            process.resume()
    wait_or_show_log(page, "window.__sightline.status.status === 'done'", 600_000, since=killed_at)
    log = page.evaluate("window.__log")
    closes = [e for e in log if e["kind"] == "close"]
    assert closes and all(e["code"] == 1013 for e in closes), closes
    assert not page.evaluate("document.body.classList.contains('ws-down')")

    # The back-off grows while Redis is away (a reconnect is accepted, gets its snapshot, then 1013
    # again, so htmx's own retry count started over at every attempt): a few tries, not one every
    # half second.
    during = [e for e in log if e["kind"] == "open" and killed_at <= e["at"] <= back_at]
    assert 1 <= len(during) <= most_reconnects((back_at - killed_at) / 1000), \
        [(e["kind"], e["at"] - killed_at) for e in log]

    # The reconnects' snapshots hold searches that no message brought before the 1013 (the worker
    # stored them while Redis was down): the page caught up from the database.
    first_close = next(i for i, e in enumerate(log) if e["kind"] == "close")
    last_snapshot = max(i for i, e in enumerate(log) if e["kind"] == "snapshot")
    before_close = {n for e in log[:first_close] for n in e.get("searched", ())}
    caught_up = {n for e in log[first_close:] if e["kind"] == "snapshot" for n in e["searched"]}
    assert caught_up - before_close, [(e["kind"], e.get("code"), e.get("searched")) for e in log]
    assert set(log[last_snapshot]["searched"]) >= before_close
    assert set(log[last_snapshot]["nodes"]) >= {n for e in log[:first_close] for n in e.get("nodes", ())}
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
