"""One client floods the on-demand work at its limits; how long does another client's fresh analysis
wait for its first ply? (issue 41, item 1: the probe sent 24 where-else scans of 512 FENs and 3 lc0
comparisons at 5,000 nodes in 9 s; another account's 30-ply analysis then sat queued for 740 s.)

Starts ``manage.py serve`` from ``--root`` (a checkout: this one, or an export of main for the figure
before) on a fresh data folder. The flooder, a client without cookies, starts two short analyses with
the home form (``--scan-network``, cf-small, whose 512-position scan is among the slow ones, and
``--lc0-network``, an Lc0 net lc0 runs), waits for them, then sends ``--scans`` where-else scans of 512
positions (the head atlas's sample twice; a different unit each, so none is answered from the cache) on
the first and ``--lc0`` comparisons at 5,000 nodes on the second, all at once (a thread each); a 429 is waited out (its Retry-After,
at most 30 s) and sent again, so the flooder stays at its limits. ``--delay`` seconds after the flood
starts, another client (a browser session) posts a ``--plies``-ply game with the form's defaults and
reads the job's API until its first evaluation is stored: that wait is the figure.

    .venv/bin/python bench/fair_use.py [--root PATH] [--scans 24] [--lc0 3] [--plies 30] [--limit 400]
        [--scan-network cf-small] [--lc0-network maia-1900]

Writes artifacts/bench/fair_use.json (or ``--out``).
"""

from __future__ import annotations

import argparse
import http.cookiejar
import json
import os
import re
import urllib.parse
import shutil
import tempfile
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

import sys  # noqa: E402

sys.path.insert(0, str(ROOT))

from bench.engine_lane import GAME, first_plies  # noqa: E402
from bench.serve_start import Site  # noqa: E402

FLOODER_GAME = "1. e4 e5 2. Nf3 Nc6 *"
POOL = 512
MAX_WAIT_S = 30.0


def pool_fens() -> list[str]:
    from analysis.heads.sample import load_sample

    fens = [board.fen() for board in load_sample()]
    return (fens * (POOL // len(fens) + 1))[:POOL]


class Flooder:
    """A cookie-less client sending on-demand work, waiting out each 429 and sending it again."""

    def __init__(self, base: str, stop: threading.Event):
        self.base, self.stop = base, stop
        self.opener = urllib.request.build_opener()  # no cookies: known by its address
        self.refusals: list[int] = []  # Retry-After of each 429
        self.accepted = 0
        self.lock = threading.Lock()

    def send(self, path: str, body: dict | None = None) -> int:
        """Until taken (202/200) or stopped; the last status."""
        while not self.stop.is_set():
            data = None if body is None else json.dumps(body).encode()
            request = urllib.request.Request(self.base + path.lstrip("/"), data=data,
                                             headers={"Content-Type": "application/json"})
            try:
                with self.opener.open(request, timeout=60) as response:
                    status = response.status
            except urllib.error.HTTPError as error:
                status = error.code
                if status == 429:
                    wait = float(error.headers.get("Retry-After") or 1)
                    with self.lock:
                        self.refusals.append(int(wait))
                    self.stop.wait(min(wait, MAX_WAIT_S))
                    continue
            with self.lock:
                self.accepted += status in (200, 202)
            return status
        return 0


def submit_on(site: Site, page: str, pgn: str, network: str) -> str:
    """The home form posted with ``network`` and its default search; the job's id."""
    option = re.search(rf'<option value="{re.escape(network)}" data-search="([^"]+)"', page)
    if option is None:
        raise RuntimeError(f"the home form offers no network {network}")
    token = next(c.value for h in site.opener.handlers if isinstance(h, urllib.request.HTTPCookieProcessor)
                 for c in h.cookiejar if c.name == "csrftoken")
    body = urllib.parse.urlencode({"pgn": pgn, "network": network, "search": option.group(1),
                                   "csrfmiddlewaretoken": token}).encode()
    with site.opener.open(site.base, data=body, timeout=60) as response:
        return urllib.parse.urlsplit(response.url).path.strip("/").split("/")[1]


def jobs_done(site: Site, job_ids: list[str], limit_s: float) -> None:
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        states = []
        for job_id in job_ids:
            with site.opener.open(f"{site.base}api/jobs/{job_id}/", timeout=30) as response:
                states.append(json.loads(response.read())["job"]["status"])
        if all(s in ("done", "failed", "cancelled") for s in states):
            return
        time.sleep(0.5)
    raise RuntimeError("the flooder's analyses did not finish")


def session_opener() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))


def run(root: Path, folder: Path, args) -> dict:
    site = Site(root, folder / "var", folder / "serve.log", args.limit)
    stop = threading.Event()
    try:
        _, page = site.first_answer()
        scanned, compared = (submit_on(site, page, FLOODER_GAME, name) for name in (args.scan_network, args.lc0_network))
        jobs_done(site, [scanned, compared], 300)
        flooder, fens = Flooder(site.base, stop), pool_fens()
        work = [(f"/api/jobs/{scanned}/nodes/0/lens/where-else/", {"layer": 0, "index": i, "fens": fens})
                for i in range(args.scans)]
        work += [(f"/jobs/{compared}/nodes/{i}/lc0/?nodes=5000", None) for i in range(args.lc0)]
        pool = ThreadPoolExecutor(len(work))  # one thread a request: a waiting scan never holds back a comparison
        flood_t0 = time.monotonic()
        futures = [pool.submit(flooder.send, path, body) for path, body in work]
        time.sleep(args.delay)
        site.opener = session_opener()  # the other client: a browser of its own
        with site.opener.open(site.base, timeout=60) as response:
            victim_page = response.read().decode()
        submitted = time.monotonic()
        victim = site.submit(victim_page, first_plies(GAME.read_text(), args.plies))
        site.ply_limit_s = submitted - site.t0 + args.limit  # Site counts from serve's start
        ply_at = site.first_ply(victim)
        wait_s = None if ply_at is None else round(ply_at - (submitted - site.t0), 2)
        statuses = [f.result() for f in futures if f.done()]
        return {"first_ply_wait_s": wait_s, "limit_s": args.limit, "flood_accepted": flooder.accepted,
                "flood_sent": len(work), "flood_429s": len(flooder.refusals),
                "retry_after_s": sorted(set(flooder.refusals)), "flood_statuses": sorted(set(statuses)),
                "flood_seconds_before_submit": round(submitted - flood_t0, 2), "load_1min": round(os.getloadavg()[0], 2)}
    finally:
        stop.set()
        site.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose serve is measured")
    parser.add_argument("--scans", type=int, default=24)
    parser.add_argument("--lc0", type=int, default=3)
    parser.add_argument("--plies", type=int, default=30)
    parser.add_argument("--scan-network", default="cf-small")
    parser.add_argument("--lc0-network", default="maia-1900")
    parser.add_argument("--delay", type=float, default=9.0, help="seconds of flood before the other client submits")
    parser.add_argument("--limit", type=float, default=400.0, help="seconds to wait for the first ply")
    parser.add_argument("--out", type=Path, default=ROOT / "artifacts" / "bench" / "fair_use.json")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="sightline-fairuse-"))
    try:
        result = {"root": str(args.root), "cpus": os.cpu_count(), "scans": args.scans, "lc0": args.lc0,
                  "scan_network": args.scan_network, "lc0_network": args.lc0_network,
                  "plies": args.plies, **run(args.root, folder, args)}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
