"""Live-site benchmark: the three figures the site issue asks for.

1. publish -> browser latency: 50 Chromium pages hold a websocket to one job;
   the bench publishes small messages to the job's channel-layer group the way
   a worker does (``GroupPublisher``); each page records ``Date.now() - sent_at``.
   Target: p95 < 50 ms on loopback. The pages are set up and read over the DevTools
   protocol with nothing attached while messages arrive (``--client cdp``, see ``CdpPages``);
   ``--client playwright`` keeps Playwright attached, as before, whose per-frame reports
   cost Chromium more CPU than the web server spends on the messages.
2. whole-game analysis time of an 80-ply game with the default network (one
   forward pass per position: policy + value, the ``policy`` search), against
   Stockfish depth 12 over the same positions, as a ratio. Target: >= 10x faster.
3. submit -> first ply on screen: a real form submit in Chromium to the first
   ply's result rendered on the game page, with the model already loaded in
   the worker. Target: < 300 ms.

The site runs as ``manage.py serve`` (embedded Redis, Celery worker, uvicorn)
in a temporary folder; figure 2 runs in this process. Writes
artifacts/bench/live.json.

    .venv/bin/python bench/live.py [--clients 50] [--messages 200] [--trials 8] [--client cdp|playwright]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED_PGN = ROOT.parent / "shared" / "data" / "pgn" / "Capablanca.pgn"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def games_from(path: Path, min_plies: int, count: int) -> list[str]:
    import chess.pgn

    out = []
    with path.open(encoding="utf-8", errors="replace") as handle:
        while len(out) < count:
            game = chess.pgn.read_game(handle)
            if game is None:
                break
            if sum(1 for _ in game.mainline_moves()) >= min_plies and not game.errors:
                exporter = chess.pgn.StringExporter(headers=True, variations=False, comments=False)
                out.append(game.accept(exporter))
    return out


def truncate_game(pgn: str, plies: int) -> str:
    import io

    import chess.pgn

    game = chess.pgn.read_game(io.StringIO(pgn))
    node = game
    for _ in range(plies):
        node = node.variations[0]
    node.variations.clear()
    return game.accept(chess.pgn.StringExporter(headers=True, variations=False, comments=False))


# -- figure 2: analysis speed vs Stockfish --------------------------------------------------
def analysis_speed(pgn: str, plies: int, depth: int, rounds: int) -> dict:
    """Network and Stockfish alternate, ``rounds`` times each, and the ratio is taken per round.

    The machine is shared with other jobs whose load comes and goes within seconds; timing
    one side long after the other measured the load as much as the engines. Both sides get
    one thread: the worker's torch threads (``SIGHTLINE_TORCH_THREADS``, 1 by default) and
    Stockfish ``Threads 1`` with a 64 MB hash kept across the game's positions, as an
    analysis server would run it (``ucinewgame`` once per round, not per position).
    """
    import chess
    import chess.engine
    from django.conf import settings

    from analysis.engines.stockfish import find_stockfish
    from webapp.jobs.gameinput import parse_pgn
    from webapp.jobs.jobs import create_job
    from webapp.jobs.models import PositionResult
    from webapp.jobs.live.publish import NullPublisher
    from webapp.jobs.run.runner import JobRun
    from webapp.networks.model_cache import models
    from webapp.networks.models import Network

    network = Network.objects.filter(active=True).first()
    evaluator = models.get(network)
    tree = parse_pgn(truncate_game(pgn, plies))
    positions = len(tree.nodes)
    # Warm up (first forward passes build caches), then time a run with an empty result cache.
    warm = create_job(parse_pgn("1. e4 e5 2. Nf3 Nc6 *"), network, "policy", 1, dispatch=False)
    JobRun(warm, evaluator, NullPublisher()).run()
    def network_run(search: str) -> float:
        PositionResult.objects.filter(network_checksum=network.checksum).delete()  # nothing cached
        job = create_job(tree, network, search, 1, dispatch=False)
        t0 = time.perf_counter()
        done = JobRun(job, evaluator, NullPublisher()).run()
        assert done.status == "done", done.error
        return time.perf_counter() - t0

    boards = []
    board = chess.Board(tree.start_fen)
    boards.append(board.copy())
    for node in tree.nodes[1:]:
        board.push(chess.Move.from_uci(node["uci"] if isinstance(node, dict) else node.uci))
        boards.append(board.copy())
    stockfish = find_stockfish()
    engine = chess.engine.SimpleEngine.popen_uci(stockfish) if stockfish else None
    network_s, stockfish_s, load = [], [], []
    try:
        if engine is not None:
            engine.configure({"Threads": 1, "Hash": 64})
            engine.analyse(chess.Board(), chess.engine.Limit(depth=8))
        for round_ in range(rounds):
            load.append(round(os.getloadavg()[0], 2))
            network_s.append(network_run("policy"))
            if engine is not None:
                t0 = time.perf_counter()
                for b in boards:
                    if not b.is_game_over():  # game=round_: ucinewgame before the round's first position
                        engine.analyse(b, chess.engine.Limit(depth=depth), game=round_)
                stockfish_s.append(time.perf_counter() - t0)
        value_s = network_run("value")
        engine_name = engine.id.get("name") if engine is not None else None
    finally:
        if engine is not None:
            engine.quit()
    ratios = [s / n for s, n in zip(stockfish_s, network_s)]
    return {
        "network": network.display_label, "untrained": network.is_untrained, "positions": positions,
        "device": str(getattr(evaluator, "device", "cpu")), "torch_threads": settings.SIGHTLINE_TORCH_THREADS,
        "rounds": rounds, "load_1min_per_round": load,
        "network_policy_value_s": round(statistics.median(network_s), 3),
        "network_policy_value_s_rounds": [round(t, 3) for t in network_s],
        "network_value_search_s": round(value_s, 3),
        "stockfish": engine_name, "stockfish_threads": 1, "stockfish_hash_mb": 64, "stockfish_depth": depth,
        "stockfish_s": round(statistics.median(stockfish_s), 3) if stockfish_s else None,
        "stockfish_s_rounds": [round(t, 3) for t in stockfish_s],
        "ratio_stockfish_over_network": round(statistics.median(ratios), 1) if ratios else None,
        "ratio_rounds": [round(r, 1) for r in ratios],
    }


# -- the site in a child process ----------------------------------------------------------------
class Site:
    def __init__(self, var_dir: Path, port: int):
        self.port = port
        self.base = f"http://127.0.0.1:{port}/"
        self.log_path = var_dir / "serve.log"
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--port", str(port)], cwd=ROOT, env=dict(os.environ),
            stdout=self.log_path.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(self.base, timeout=2):
                    break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"serve did not start:\n{self.log_path.read_text()[-3000:]}")
                time.sleep(0.3)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            self.process.wait(60)


# -- figure 1: publish -> browser latency --------------------------------------------------------
OPEN_SOCKET_JS = """(url) => new Promise((resolve, reject) => {
  window.lat = []; const ws = new WebSocket(url); window.ws = ws;
  ws.onmessage = (e) => { const m = JSON.parse(e.data); if (m.kind === 'snapshot') resolve(true);
                          else if (m.kind === 'progress' && m.sent_at_ms) window.lat.push(Date.now() - m.sent_at_ms); };
  ws.onerror = () => reject(new Error('websocket error'));
})"""


def listening_job():
    """A job for the clients to listen to (created before Playwright's event loop exists).

    It is never dispatched, but the workers' reaper sends any job left queued without a task,
    so the job may also run and publish its own messages: the clients count only the
    ``progress`` messages this bench publishes.
    """
    from webapp.jobs.gameinput import parse_pgn
    from webapp.jobs.jobs import create_job
    from webapp.networks.models import Network

    return create_job(parse_pgn("1. e4 e5 *"), Network.objects.get(name="material"), "value", 1, dispatch=False)


def publish_in_thread(job_id, messages: int, rate: float) -> None:
    """Publish as a worker does. In its own thread: async_to_sync refuses to run in
    a thread that has an event loop, and Playwright's sync API keeps one."""
    import threading

    from webapp.jobs.live.publish import GroupPublisher

    def run():
        publish = GroupPublisher(job_id)
        for i in range(messages):
            publish("progress", {"node": i % 3, "nodes": i, "nps": 1000})
            time.sleep(1.0 / rate)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()


def publish_latency(browser, site: Site, job, clients: int, messages: int, rate: float) -> dict:
    context = browser.new_context()
    pages = []
    ws_url = f"ws://127.0.0.1:{site.port}/ws/jobs/{job.id}/"
    for _ in range(clients):
        page = context.new_page()
        page.goto(site.base + "networks/material/")
        page.evaluate(OPEN_SOCKET_JS, ws_url)
        pages.append(page)
    time.sleep(0.5)
    publish_in_thread(job.id, messages, rate)
    time.sleep(1.0)
    samples: list[float] = []
    received = 0
    for page in pages:
        values = page.evaluate("window.lat")
        received += len(values)
        samples.extend(values)
    context.close()
    return {"clients": clients, "messages": messages, "delivered": received, "expected": clients * messages,
            "p50_ms": round(percentile(samples, 0.5), 1), "p95_ms": round(percentile(samples, 0.95), 1),
            "max_ms": round(max(samples), 1)}


class CdpPages:
    """Chromium pages driven over the DevTools protocol only while they are set up and read.

    Playwright keeps a DevTools session with the Network domain enabled on every page it
    drives, so each websocket frame a page receives is also reported to it (a CDP event
    through the browser process to Playwright's driver). That is the bench's own work,
    not the site's, and with 50 pages x 50 messages/s it was most of Chromium's CPU time
    on this 2-core machine. Here the pages are created and their sockets opened over
    short-lived sessions, which are closed (nothing attached) while messages arrive.
    """

    FLAGS = ["--disable-background-timer-throttling", "--disable-backgrounding-occluded-windows",
             "--disable-renderer-backgrounding", "--disable-ipc-flooding-protection", "--disable-extensions",
             "--disable-default-apps", "--disable-hang-monitor", "--disable-popup-blocking",
             "--password-store=basic", "--use-mock-keychain", "--no-default-browser-check"]

    def __init__(self):
        self.profile = Path(tempfile.mkdtemp(prefix="sightline-bench-chromium-"))
        self.process = subprocess.Popen(
            [CHROMIUM, *CHROMIUM_FLAGS, *self.FLAGS, "--remote-debugging-port=0", f"--user-data-dir={self.profile}",
             "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.exists() and len(port_file.read_text().splitlines()) >= 2):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise SystemExit("chromium did not open its DevTools port")
            time.sleep(0.1)
        port, path = port_file.read_text().splitlines()[:2]
        self.devtools = f"ws://127.0.0.1:{port}"
        self.browser_path = path
        self.targets: list[str] = []

    def _call(self, url: str, method: str, params: dict | None = None) -> dict:
        from websockets.sync.client import connect

        with connect(url, max_size=None, open_timeout=30) as ws:
            ws.send(json.dumps({"id": 1, "method": method, "params": params or {}}))
            while True:
                reply = json.loads(ws.recv(timeout=120))
                if reply.get("id") == 1:
                    if "error" in reply:
                        raise RuntimeError(f"{method}: {reply['error']}")
                    return reply["result"]

    def evaluate(self, target: str, expression: str):
        result = self._call(f"{self.devtools}/devtools/page/{target}", "Runtime.evaluate",
                            {"expression": expression, "awaitPromise": True, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"page error: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, url: str) -> str:
        target = self._call(f"{self.devtools}{self.browser_path}", "Target.createTarget", {"url": url})["targetId"]
        deadline = time.monotonic() + 60
        while True:
            try:
                if self.evaluate(target, "document.location.href !== 'about:blank' && document.readyState") \
                        == "complete":
                    break
            except RuntimeError:  # between documents: no execution context yet
                pass
            if time.monotonic() > deadline:
                raise SystemExit(f"{url} did not load")
            time.sleep(0.05)
        self.targets.append(target)
        return target

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def publish_latency_cdp(site: Site, job, clients: int, messages: int, rate: float) -> dict:
    pages = CdpPages()
    try:
        ws_url = f"ws://127.0.0.1:{site.port}/ws/jobs/{job.id}/"
        targets = [pages.open(site.base + "networks/material/") for _ in range(clients)]
        for target in targets:
            pages.evaluate(target, f"({OPEN_SOCKET_JS})({json.dumps(ws_url)})")
        time.sleep(0.5)
        publish_in_thread(job.id, messages, rate)
        time.sleep(1.0)
        samples: list[float] = []
        for target in targets:
            samples.extend(pages.evaluate(target, "window.lat"))
    finally:
        pages.close()
    return {"clients": clients, "messages": messages, "delivered": len(samples), "expected": clients * messages,
            "p50_ms": round(percentile(samples, 0.5), 1), "p95_ms": round(percentile(samples, 0.95), 1),
            "max_ms": round(max(samples), 1)}


# -- figure 3: submit -> first ply on screen --------------------------------------------------------
def first_ply(browser, site: Site, games: list[str], search: str) -> dict:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})

    def submit(pgn: str) -> float:
        page.goto(site.base)
        page.fill("#id_pgn", pgn)
        page.select_option("#id_search", search)
        t0 = page.evaluate("Date.now()")
        page.click("button[type=submit]")
        page.wait_for_url("**/jobs/**")
        page.wait_for_function("window.__sightline && window.__sightline.firstPlyAt !== undefined", timeout=120_000)
        first = page.evaluate("window.__sightline.firstPlyAt") - t0
        page.wait_for_function("['done', 'failed'].includes(window.__sightline.status.status)", timeout=300_000)
        return first

    submit(games[0])  # loads the model in the worker
    times = [submit(pgn) for pgn in games[1:]]
    page.close()
    return {"trials": len(times), "search": search, "median_ms": round(statistics.median(times), 1),
            "p95_ms": round(percentile(times, 0.95), 1), "min_ms": round(min(times), 1), "max_ms": round(max(times), 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--rates", default="10,50",
                        help="messages per second to publish, comma-separated (a running search sends about "
                             "5 a second: one result per position and up to 4 progress updates)")
    parser.add_argument("--client", choices=["cdp", "playwright"], default="cdp",
                        help="publish figure: pages with no DevTools session attached while messages arrive (cdp), "
                             "or driven by Playwright throughout, which reports every frame to it (playwright)")
    parser.add_argument("--plies", type=int, default=80)
    parser.add_argument("--depth", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=3,
                        help="network and Stockfish runs, alternating; the ratio is the median of the rounds'")
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--pgn", type=Path, default=SHARED_PGN, help="games to analyse (needs >= --plies plies)")
    parser.add_argument("--out", type=Path, default=ROOT / "artifacts" / "bench" / "live.json")
    parser.add_argument("--figures", default="speed,publish,first-ply",
                        help="which figures to measure, comma-separated (default: all three)")
    args = parser.parse_args()
    figures = set(args.figures.split(","))
    if not args.pgn.exists():
        raise SystemExit(f"{args.pgn} not found: pass --pgn with games of at least {args.plies} plies")
    games = games_from(args.pgn, args.plies, args.trials + 2)
    if len(games) < 2:
        raise SystemExit(f"{args.pgn}: fewer than 2 games with {args.plies}+ plies")

    var_dir = Path(tempfile.mkdtemp(prefix="sightline-bench-"))
    for name in ("DATABASE_URL", "REDIS_URL"):
        os.environ.pop(name, None)
    os.environ.update(SIGHTLINE_VAR_DIR=str(var_dir), DJANGO_SETTINGS_MODULE="webapp.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    site = Site(var_dir, free_port())  # migrates and registers the shipped networks
    results: dict = {"machine": {"cpus": os.cpu_count(), "load_1min": round(os.getloadavg()[0], 2)}}
    try:
        if "speed" in figures:
            results["analysis_speed"] = analysis_speed(games[0], args.plies, args.depth, args.rounds)
            print(json.dumps({"analysis_speed": results["analysis_speed"]}), flush=True)
        from playwright.sync_api import sync_playwright

        job = listening_job()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            results["publish_to_browser"] = []
            for rate in (float(r) for r in args.rates.split(",") if "publish" in figures):
                if args.client == "cdp":
                    figure = publish_latency_cdp(site, job, args.clients, args.messages, rate)
                else:
                    figure = publish_latency(browser, site, job, args.clients, args.messages, rate)
                figure["client"] = args.client
                figure["rate_per_s"] = rate
                results["publish_to_browser"].append(figure)
                print(json.dumps({"publish_to_browser": figure}), flush=True)
            if "first-ply" in figures:
                results["submit_to_first_ply"] = first_ply(browser, site, games[1:], "policy")
                print(json.dumps({"submit_to_first_ply": results["submit_to_first_ply"]}), flush=True)
            browser.close()
    finally:
        site.stop()
        results["machine"]["load_1min_after"] = round(os.getloadavg()[0], 2)
        shutil.rmtree(var_dir, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    speed, lat, first = (results.get(k) for k in ("analysis_speed", "publish_to_browser", "submit_to_first_ply"))
    print()
    for figure in lat:
        print(f"publish -> browser, {figure['clients']} clients ({figure['client']}), {figure['rate_per_s']:g} msg/s: "
              f"p50 {figure['p50_ms']} ms, "
              f"p95 {figure['p95_ms']} ms ({figure['delivered']}/{figure['expected']} delivered; target p95 < 50 ms)")
    if speed:
        print(f"network: {speed['network']} on {speed['device']}")
        print(f"{speed['positions']} positions: network {speed['network_policy_value_s']} s, Stockfish depth "
              f"{speed['stockfish_depth']} {speed['stockfish_s']} s -> {speed['ratio_stockfish_over_network']}x "
              f"(target >= 10x; median of {speed['rounds']} alternating rounds: {speed['ratio_rounds']}); "
              f"value search {speed['network_value_search_s']} s")
    if first:
        print(f"submit -> first ply: median {first['median_ms']} ms, p95 {first['p95_ms']} ms over {first['trials']} "
              f"(target < 300 ms)")
    print(f"load average during the run: {results['machine']['load_1min']} -> {results['machine']['load_1min_after']} "
          f"on {results['machine']['cpus']} cpus")
    return 0


if __name__ == "__main__":
    sys.exit(main())
