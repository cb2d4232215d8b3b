"""``serve``'s start as a new user meets it (issue 37 item 1): start -> first HTTP answer, and a game
submitted at once -> its first ply, on an empty data folder (cold) and again on the same folder (warm).

Each run starts ``manage.py serve`` from ``--root`` (a checkout; default this one) on a fresh var folder,
asks for the home page until it answers 200, posts the home form at once with the page's default
network and search (an 80-ply game, the engine lane at its default), then reads the job's API until
its first evaluation is stored. The warm run is a second start on the folder the cold run left.

    .venv/bin/python bench/serve_start.py [--root PATH] [--runs 1] [--plies 80]

Writes artifacts/bench/serve_start.json.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.engine_lane import GAME, first_plies  # noqa: E402

START_LIMIT_S = 600.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Site:
    """One ``serve`` from ``root`` on ``var`` (the networks of ``weights``, default the checkout's); the clock
    starts when the process is started. ``env`` is serve's environment, for ``manage.py`` beside it."""

    def __init__(self, root: Path, var: Path, log: Path, ply_limit_s: float, weights: Path | None = None):
        self.ply_limit_s = ply_limit_s
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}/"
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")}
        env.update(SIGHTLINE_VAR_DIR=str(var), SIGHTLINE_WEIGHTS_DIR=str(weights or root / "weights"),
                   PYTHONUNBUFFERED="1")
        self.root, self.env, self.log = root, env, log
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        self.t0 = time.monotonic()
        self.process = subprocess.Popen([sys.executable, "manage.py", "serve", "--port", str(self.port)], cwd=root,
                                        env=env, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)

    def csrf_token(self) -> str:
        """The CSRF cookie's value (Django takes it as the form's token too)."""
        return next(c.value for h in self.opener.handlers if isinstance(h, urllib.request.HTTPCookieProcessor)
                    for c in h.cookiejar if c.name == "csrftoken")

    def since_start(self) -> float:
        return round(time.monotonic() - self.t0, 2)

    def first_answer(self) -> tuple[float, str]:
        """Seconds from start to the home page's first 200, and the page."""
        while time.monotonic() - self.t0 < START_LIMIT_S:
            try:
                with self.opener.open(self.base, timeout=5) as response:
                    if response.status == 200:
                        return self.since_start(), response.read().decode()
            except OSError:
                pass
            if self.process.poll() is not None:
                raise RuntimeError("serve exited before answering")
            time.sleep(0.1)
        raise RuntimeError("serve did not answer")

    def submit(self, page: str, pgn: str) -> str:
        """The home form posted with its defaults, as a browser would; the job's id."""
        network = re.search(r'<option value="([^"]+)" data-search="([^"]+)"[^>]* selected>', page)
        return self.post_form({"pgn": pgn, "network": network.group(1), "search": network.group(2)})

    def post_form(self, fields: dict) -> str:
        """The home form posted with ``fields``; the job's id."""
        body = urllib.parse.urlencode({**fields, "csrfmiddlewaretoken": self.csrf_token()}).encode()
        with self.opener.open(self.base, data=body, timeout=60) as response:
            path = urllib.parse.urlsplit(response.url).path
        if not path.startswith("/jobs/"):
            raise RuntimeError(f"the form did not start a job: {path}")
        return path.strip("/").split("/")[1]

    def first_ply(self, job_id: str) -> float | None:
        """Seconds from start until the job's first evaluation is stored; None: not within the limit."""
        while time.monotonic() - self.t0 < self.ply_limit_s:
            with self.opener.open(f"{self.base}api/jobs/{job_id}/", timeout=30) as response:
                state = json.loads(response.read())
            results = state.get("results") or {}
            if any((r or {}).get("eval") for r in (results.values() if isinstance(results, dict) else results)):
                return self.since_start()
            time.sleep(0.1)
        return None

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(90)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def one_start(root: Path, var: Path, log: Path, pgn: str, ply_limit_s: float) -> dict:
    """One start's figures (``first_ply_s`` None: no ply within ``ply_limit_s`` of the start)."""
    site = Site(root, var, log, ply_limit_s)
    try:
        http_s, page = site.first_answer()
        print(f"{log.stem}: first HTTP answer {http_s} s after start", flush=True)
        submitted = site.since_start()
        ply_s = site.first_ply(site.submit(page, pgn))
        return {"first_http_s": http_s, "first_ply_s": ply_s,
                "submit_to_first_ply_s": None if ply_s is None else round(ply_s - submitted, 2),
                "ply_limit_s": ply_limit_s}
    finally:
        site.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose serve is measured")
    parser.add_argument("--runs", type=int, default=1, help="cold + warm pairs, each on a new data folder")
    parser.add_argument("--plies", type=int, default=80)
    parser.add_argument("--ply-limit", type=float, default=900.0, help="seconds from start to wait for the first ply")
    parser.add_argument("--out", type=Path, default=ROOT / "artifacts" / "bench" / "serve_start.json")
    args = parser.parse_args()
    pgn = first_plies(GAME.read_text(), args.plies)
    runs = []
    for _ in range(args.runs):
        folder = Path(tempfile.mkdtemp(prefix="sightline-start-"))
        try:
            cold = one_start(args.root, folder / "var", folder / "cold.log", pgn, args.ply_limit)
            warm = one_start(args.root, folder / "var", folder / "warm.log", pgn, args.ply_limit)
            runs.append({"cold": cold, "warm": warm, "load_1min": round(os.getloadavg()[0], 2)})
            print(json.dumps(runs[-1]), flush=True)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    result = {"root": str(args.root), "cpus": os.cpu_count(), "plies": args.plies, "runs": runs}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    for run in runs:
        for kind in ("cold", "warm"):
            r = run[kind]
            ply = (f"first ply {r['first_ply_s']} s after start ({r['submit_to_first_ply_s']} s after the submission)"
                   if r["first_ply_s"] is not None else f"no first ply within {r['ply_limit_s']:.0f} s of the start")
            print(f"{kind}: first HTTP answer {r['first_http_s']} s after start; {ply}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
