"""Other clients' latency while an anonymous client sends a 200 MB body to the home form.

Starts ``manage.py serve --no-worker`` (embedded Redis, migrations, the web server) in a
temporary folder. A probe thread sends an HTTP GET and a websocket ping (the job page's
socket answers ``pong``) every ``--interval`` seconds, idle first, then while a raw socket
posts a ``--mb`` multipart body to ``/`` as fast as loopback takes it. Prints p50/p95/max
round trips idle vs during the upload, what the uploader got back and after how many bytes,
and the web process's RSS growth.

``--server daphne`` measures the server the site used before (daphne, started beside serve
on the same Redis and database) for the before/after comparison.

    .venv/bin/python bench/upload.py [--server uvicorn|daphne] [--mb 200]
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.live import free_port, percentile  # noqa: E402


@dataclass
class Probe:
    """Round trips (start time, seconds) of HTTP GETs and websocket pings, one of each per interval."""

    base: str
    ws_url: str
    interval: float
    http: list[tuple[float, float]] = field(default_factory=list)
    ws: list[tuple[float, float]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None

    def run(self) -> None:
        try:
            self._probe()
        except BaseException as exc:  # reported by the main thread
            self.error = exc

    def _probe(self) -> None:
        from websockets.sync.client import connect

        with connect(self.ws_url, open_timeout=30, origin=self.base.rstrip("/")) as ws:
            ws.recv(timeout=30)  # the snapshot
            while not self.stop.is_set():
                t0 = time.monotonic()
                with urllib.request.urlopen(self.base + "recent/", timeout=60) as response:
                    response.read()
                t1 = time.monotonic()
                self.http.append((t0, t1 - t0))
                ws.send(json.dumps({"kind": "ping", "t": t1}))
                while json.loads(ws.recv(timeout=60)).get("kind") != "pong":
                    pass
                self.ws.append((t1, time.monotonic() - t1))
                time.sleep(max(0.0, self.interval - (time.monotonic() - t0)))


def summary(samples: list[tuple[float, float]], start: float, end: float) -> dict:
    values = [rtt * 1000 for t, rtt in samples if start <= t <= end]
    if not values:
        return {"samples": 0}
    return {"samples": len(values), "p50_ms": round(percentile(values, 0.5), 1),
            "p95_ms": round(percentile(values, 0.95), 1), "max_ms": round(max(values), 1)}


def upload(port: int, megabytes: int) -> dict:
    """Posts a multipart body with one ``pgn_file`` of ``megabytes`` MB; stops when answered."""
    boundary = "sightlinebench"
    size_file = megabytes * 1024 * 1024
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"pgn_file\"; filename=\"big.pgn\"\r\n"
            f"Content-Type: text/plain\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    length = len(head) + size_file + len(tail)
    chunk = b"1. e4 e5 " * 7282  # about 64 KiB
    t0 = time.monotonic()
    sent, answer = 0, b""
    with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
        sock.sendall(f"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary={boundary}"
                     f"\r\nContent-Length: {length}\r\n\r\n".encode() + head)
        try:
            while sent < size_file and not select.select([sock], [], [], 0)[0]:  # until the server answers
                sent += sock.send(chunk[: size_file - sent])
            if sent == size_file:
                sock.sendall(tail)
        except OSError:
            pass  # the server hung up: what it said first may still be readable
        try:
            while b"\r\n" not in answer and (more := sock.recv(65536)):
                answer += more
        except OSError as exc:
            answer = answer or f"({type(exc).__name__})".encode()
    return {"body_bytes": length, "sent_bytes": sent, "seconds": round(time.monotonic() - t0, 2),
            "status_line": answer.split(b"\r\n", 1)[0].decode("latin-1")}


def web_process(serve: subprocess.Popen, server: str) -> psutil.Process:
    for child in psutil.Process(serve.pid).children(recursive=True):
        if server in " ".join(child.cmdline()):
            return child
    raise SystemExit(f"no {server} process under serve")


def start_serve(var_dir: Path, port: int) -> subprocess.Popen:
    log = (var_dir / "serve.log").open("w")
    process = subprocess.Popen([sys.executable, "manage.py", "serve", "--no-worker", "--port", str(port)], cwd=ROOT,
                               env=dict(os.environ), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    wait_for(f"http://127.0.0.1:{port}/", process, var_dir / "serve.log")
    return process


def start_daphne(var_dir: Path, port: int) -> subprocess.Popen:
    log = (var_dir / "daphne.log").open("w")
    env = {**os.environ, "SIGHTLINE_SERVE_STATIC": "1"}
    process = subprocess.Popen([sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
                                "webapp.asgi:application"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    wait_for(f"http://127.0.0.1:{port}/", process, var_dir / "daphne.log")
    return process


def wait_for(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{url} did not come up:\n{log.read_text()[-3000:]}")
            time.sleep(0.3)


def listening_job_id() -> str:
    from webapp.jobs.gameinput import parse_pgn
    from webapp.jobs.jobs import create_job
    from webapp.networks.models import Network

    return str(create_job(parse_pgn("1. e4 e5 *"), Network.objects.get(name="material"), "value", 1,
                          dispatch=False).id)


def measure(port: int, web: psutil.Process, args) -> dict:
    probe = Probe(f"http://127.0.0.1:{port}/", f"ws://127.0.0.1:{port}/ws/jobs/{listening_job_id()}/", args.interval)
    thread = threading.Thread(target=probe.run, daemon=True)
    thread.start()
    time.sleep(args.idle)
    rss_before = web.memory_info().rss
    rss_peak = [rss_before]
    sampling = threading.Event()

    def sample_rss():
        while not sampling.is_set():
            rss_peak[0] = max(rss_peak[0], web.memory_info().rss)
            time.sleep(0.05)

    sampler = threading.Thread(target=sample_rss, daemon=True)
    sampler.start()
    idle_end = time.monotonic()
    uploads = [upload(port, args.mb)]
    while time.monotonic() - idle_end < args.during:  # an uploader that tries again, for a fair window
        uploads.append(upload(port, args.mb))
    upload_end = time.monotonic()
    time.sleep(args.after)
    sampling.set()
    probe.stop.set()
    thread.join(120)
    if probe.error is not None:
        raise SystemExit(f"the probe failed: {probe.error!r}")
    rss_after = web.memory_info().rss
    start = idle_end - args.idle
    return {
        "uploads": len(uploads), "upload_seconds": round(upload_end - idle_end, 2), "first_upload": uploads[0],
        "statuses": sorted({u["status_line"] for u in uploads}),
        "http_idle": summary(probe.http, start, idle_end), "http_during": summary(probe.http, idle_end, upload_end + 0.5),
        "ws_idle": summary(probe.ws, start, idle_end), "ws_during": summary(probe.ws, idle_end, upload_end + 0.5),
        "web_rss_mb": {"before": round(rss_before / 2**20, 1), "peak": round(rss_peak[0] / 2**20, 1),
                       "after": round(rss_after / 2**20, 1),
                       "growth_peak": round((rss_peak[0] - rss_before) / 2**20, 1)},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", choices=["uvicorn", "daphne"], default="uvicorn")
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between probes")
    parser.add_argument("--idle", type=float, default=5.0, help="seconds of idle probes before the upload")
    parser.add_argument("--during", type=float, default=5.0,
                        help="upload again until this many seconds have passed (one upload is enough when it takes longer)")
    parser.add_argument("--after", type=float, default=2.0, help="seconds of probes after the upload")
    parser.add_argument("--out", type=Path, default=ROOT / "artifacts" / "bench" / "upload.json")
    args = parser.parse_args()

    var_dir = Path(tempfile.mkdtemp(prefix="sightline-upload-"))
    for name in ("DATABASE_URL", "REDIS_URL"):
        os.environ.pop(name, None)
    os.environ.update(SIGHTLINE_VAR_DIR=str(var_dir), DJANGO_SETTINGS_MODULE="webapp.settings")
    import django

    django.setup()
    processes = [start_serve(var_dir, free_port())]
    try:
        port = int(processes[0].args[-1])
        if args.server == "daphne":
            port = free_port()
            processes.append(start_daphne(var_dir, port))
            web = psutil.Process(processes[-1].pid)
        else:
            web = web_process(processes[0], "uvicorn")
        result = {"server": args.server, "load_1min": round(os.getloadavg()[0], 2), **measure(port, web, args)}
    finally:
        for process in reversed(processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGINT)
                process.wait(60)
        shutil.rmtree(var_dir, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result))
    up, rss = result["first_upload"], result["web_rss_mb"]
    print(f"\n{args.server}: {args.mb} MB POST to / -> {up['status_line']!r} after {up['sent_bytes']:,} of "
          f"{up['body_bytes']:,} bytes in {up['seconds']} s; {result['uploads']} uploads in "
          f"{result['upload_seconds']} s")
    for name in ("http", "ws"):
        idle, during = result[f"{name}_idle"], result[f"{name}_during"]
        print(f"{name:4} round trip idle p50/p95/max {idle.get('p50_ms')}/{idle.get('p95_ms')}/{idle.get('max_ms')} ms; "
              f"during the upload {during.get('p50_ms')}/{during.get('p95_ms')}/{during.get('max_ms')} ms "
              f"({during['samples']} samples)")
    print(f"web process RSS {rss['before']} MB before, peak {rss['peak']} MB (+{rss['growth_peak']} MB), "
          f"{rss['after']} MB after; load average {result['load_1min']} on {os.cpu_count()} cpus")
    return 0


if __name__ == "__main__":
    sys.exit(main())
