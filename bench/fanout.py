"""Websocket fan-out on the server side: the web process's CPU per delivered message.

``bench/live.py`` measures publish -> browser with 50 Chromium pages, where the browser's
own work and the machine's load weigh as much as the server's. This bench holds
``--clients`` light websocket clients (the ``websockets`` package, one asyncio process)
on one job, publishes ``--messages`` at ``--rate`` a second the way a worker does, and
reports latency (publish -> client) and the web process's CPU seconds per delivered
message, a figure that the machine's load barely moves.

``--root`` serves another checkout (e.g. ``git worktree add /tmp/before <commit>``) with
this script, for before/after figures on the same harness.

    .venv/bin/python bench/fanout.py [--clients 50] [--rate 50] [--messages 200] [--root PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent.parent

CLIENTS_CODE = r"""
import asyncio, json, sys, time
from websockets.asyncio.client import connect
url, origin, n, quiet_s = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
latencies, frames = [], [0]
async def one(ready):
    async with connect(url, origin=origin) as ws:
        await ws.recv()  # the snapshot
        ready.append(1)
        try:
            while True:
                raw = await asyncio.wait_for(ws.recv(), quiet_s)
                now = time.time() * 1000.0
                frames[0] += 1
                message = json.loads(raw)
                for m in message if isinstance(message, list) else [message]:
                    if "sent_at_ms" in m:
                        latencies.append(now - m["sent_at_ms"])
        except asyncio.TimeoutError:
            pass
async def main():
    ready = []
    tasks = [asyncio.create_task(one(ready)) for _ in range(n)]
    while len(ready) < n:
        await asyncio.sleep(0.05)
    print("ready", flush=True)
    await asyncio.gather(*tasks)
    print(json.dumps({"latencies": latencies, "frames": frames[0]}), flush=True)
asyncio.run(main())
"""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_site(root: Path, var_dir: Path, port: int) -> subprocess.Popen:
    log = var_dir / "serve.log"
    process = subprocess.Popen([sys.executable, "manage.py", "serve", "--no-worker", "--port", str(port)], cwd=root,
                               env=dict(os.environ), stdout=log.open("w"), stderr=subprocess.STDOUT,
                               start_new_session=True)
    deadline = time.monotonic() + 600  # on a loaded 2-core machine serve took minutes to start
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/recent/", timeout=5):
                return process
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                stop_site(process)
                raise SystemExit(f"serve did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.3)


def stop_site(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGINT)
    try:
        process.wait(120)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # its children die with it (parent-death signal)
        process.wait()


def web_process(serve: subprocess.Popen) -> psutil.Process:
    for child in psutil.Process(serve.pid).children(recursive=True):
        line = " ".join(child.cmdline())
        if "uvicorn" in line or "daphne" in line:
            return child
    raise SystemExit("no web server process under serve")


def listening_job_id() -> str:
    from webapp.jobs.gameinput import parse_pgn
    from webapp.jobs.jobs import create_job
    from webapp.networks.models import Network

    return str(create_job(parse_pgn("1. e4 e5 *"), Network.objects.get(name="material"), "value", 1,
                          dispatch=False).id)


def publish(job_id: str, messages: int, rate: float) -> None:
    """As a worker does; in a thread of its own (the publisher keeps an event loop per process)."""
    from webapp.jobs.live.publish import GroupPublisher

    def run():
        send = GroupPublisher(job_id)
        start = time.monotonic()
        for i in range(messages):
            send("progress", {"node": i % 3, "nodes": i, "nps": 1000})
            time.sleep(max(0.0, start + (i + 1) / rate - time.monotonic()))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()


def measure(port: int, web: psutil.Process, args) -> dict:
    job_id = listening_job_id()
    clients = subprocess.Popen([sys.executable, "-c", CLIENTS_CODE, f"ws://127.0.0.1:{port}/ws/jobs/{job_id}/",
                                f"http://127.0.0.1:{port}", str(args.clients), "8"], stdout=subprocess.PIPE, text=True)
    if clients.stdout.readline().strip() != "ready":
        raise SystemExit("the websocket clients did not connect")
    time.sleep(0.5)
    cpu_before = sum(web.cpu_times()[:2])
    load = os.getloadavg()[0]
    publish(job_id, args.messages, args.rate)
    out = json.loads(clients.communicate(timeout=600)[0].strip().splitlines()[-1])
    web_cpu = sum(web.cpu_times()[:2]) - cpu_before
    latencies = out["latencies"]
    return {"clients": args.clients, "rate_per_s": args.rate, "messages": args.messages,
            "delivered": len(latencies), "expected": args.clients * args.messages, "frames": out["frames"],
            "p50_ms": round(percentile(latencies, 0.5), 1), "p95_ms": round(percentile(latencies, 0.95), 1),
            "max_ms": round(max(latencies), 1), "web_cpu_s": round(web_cpu, 2),
            "web_cpu_us_per_delivered": round(web_cpu / max(1, len(latencies)) * 1e6),
            "load_1min": round(load, 2), "cpus": os.cpu_count()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--rate", type=float, default=50.0, help="messages published per second")
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout whose site is served")
    parser.add_argument("--out", type=Path, default=HERE / "artifacts" / "bench" / "fanout.json")
    args = parser.parse_args()
    root = args.root.resolve()
    var_dir = Path(tempfile.mkdtemp(prefix="sightline-fanout-"))
    for name in ("DATABASE_URL", "REDIS_URL"):
        os.environ.pop(name, None)
    os.environ.update(SIGHTLINE_VAR_DIR=str(var_dir), DJANGO_SETTINGS_MODULE="webapp.settings")
    sys.path.insert(0, str(root))
    import django

    django.setup()
    port = free_port()
    site = start_site(root, var_dir, port)
    try:
        result = {"root": str(root), **measure(port, web_process(site), args)}
    finally:
        stop_site(site)
        shutil.rmtree(var_dir, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result))
    print(f"\nfan-out, {result['clients']} clients, {result['rate_per_s']:g} msg/s: p50 {result['p50_ms']} ms, "
          f"p95 {result['p95_ms']} ms, max {result['max_ms']} ms ({result['delivered']}/{result['expected']} delivered "
          f"in {result['frames']} frames); web process {result['web_cpu_s']} CPU s = "
          f"{result['web_cpu_us_per_delivered']} us per delivered message; load {result['load_1min']} on "
          f"{result['cpus']} cpus")
    return 0


if __name__ == "__main__":
    sys.exit(main())
