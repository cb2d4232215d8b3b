"""The upload check's wait behind running analyses (issue 41 item 2): from an admin upload's answer until
the network is checked, while the users' worker is busy.

Starts ``manage.py serve`` from ``--root`` (a checkout; default this one) on a new data folder with the
networks of ``--network`` only (a small site: the start's own background work is one head atlas), waits
for the first answer and for the start's background work to end (read from serve's log), then fills the
users' worker: ``--analyses`` games (default serve's two slots), 80 plies each with MCTS at a budget that
keeps it busy for many minutes. Once they run, an admin logs in through /admin/login/ and uploads a copy
of ``weights/cb-sv.safetensors`` whose metadata is changed (so its checksum is new) through the admin's
add form; /api/networks/ is read until the network's status is no longer "checking". Whether the
analyses were still running then is recorded.

    .venv/bin/python bench/upload_check_wait.py [--root PATH] [--analyses 2] [--wait-limit 900]

Writes artifacts/bench/upload_check_wait.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.engine_lane import GAME, first_plies  # noqa: E402
from bench.serve_start import Site  # noqa: E402

BACKGROUND_TASKS = ("sightline.check_network", "sightline.check_variant", "sightline.compute_head_atlas")
TASK_LINE = re.compile(r"Task (sightline\.\w+)\[([0-9a-f-]+)\] (received|succeeded|raised|failed)")
ADMIN, PASSWORD = "bench-admin", "bench-password-41"


def background_pending(log: Path) -> int:
    """Background tasks received by a worker and not yet ended, from serve's log."""
    open_ids: set[str] = set()
    for name, task_id, event in TASK_LINE.findall(log.read_text(errors="replace")):
        if name in BACKGROUND_TASKS:
            (open_ids.add if event == "received" else open_ids.discard)(task_id)
    return len(open_ids)


def wait_background_idle(site: Site, quiet_s: float = 15.0, limit_s: float = 900.0) -> float:
    """Seconds until the start's background work (atlases, checks) has ended and none came for ``quiet_s``
    (or, if none is seen at all, for two minutes)."""
    t0 = time.monotonic()
    idle_since = None
    while time.monotonic() - t0 < limit_s:
        seen = any(name in site.log.read_text(errors="replace") for name in BACKGROUND_TASKS)
        if background_pending(site.log):
            idle_since = None
        elif idle_since is None:
            idle_since = time.monotonic()
        elif time.monotonic() - idle_since >= (quiet_s if seen else 120.0):
            return round(idle_since - t0, 1)
        time.sleep(1)
    raise RuntimeError("the start's background work did not end")


def get_json(site: Site, path: str) -> dict:
    with site.opener.open(site.base + path, timeout=60) as response:
        return json.loads(response.read())


def start_analyses(site: Site, count: int, pgn: str, network: str, budget: int) -> list[str]:
    """``count`` long MCTS analyses (budgets apart, so none is another's shared job), once all run."""
    jobs = [site.post_form({"pgn": pgn, "network": network, "search": "mcts", "budget": budget - i})
            for i in range(count)]
    deadline = time.monotonic() + 600
    while any(get_json(site, f"api/jobs/{job}/")["job"]["status"] != "running" for job in jobs):
        if time.monotonic() > deadline:
            raise RuntimeError("the analyses did not all start running")
        time.sleep(1)
    return jobs


def create_admin(site: Site) -> None:
    subprocess.run([sys.executable, "manage.py", "createsuperuser", "--noinput", "--username", ADMIN,
                    "--email", "bench@example.com"], cwd=site.root, check=True, capture_output=True,
                   env={**site.env, "DJANGO_SUPERUSER_PASSWORD": PASSWORD})


def log_in(site: Site) -> None:
    site.opener.open(site.base + "admin/login/", timeout=60).read()
    body = urllib.parse.urlencode({"username": ADMIN, "password": PASSWORD, "next": "/admin/",
                                   "csrfmiddlewaretoken": site.csrf_token()}).encode()
    with site.opener.open(site.base + "admin/login/?next=/admin/", data=body, timeout=60) as response:
        if urllib.parse.urlsplit(response.url).path != "/admin/":
            raise RuntimeError("the admin login failed")


def renamed_copy(source: Path, note: str) -> bytes:
    """``source`` with a header metadata entry added: the same tensors, a new checksum."""
    raw = source.read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    header.setdefault("__metadata__", {})["bench_note"] = note
    encoded = json.dumps(header).encode()
    return struct.pack("<Q", len(encoded)) + encoded + raw[8 + length:]


def multipart(fields: dict[str, str], file_field: str, filename: str, data: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
             for k, v in fields.items()]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; filename="{filename}"\r\n'
                 f"Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n")
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def upload(site: Site, name: str, data: bytes) -> None:
    """The admin's add form posted as a browser posts it; raises unless the admin saved the network."""
    site.opener.open(site.base + "admin/networks/network/add/", timeout=60).read()
    fields = {"csrfmiddlewaretoken": site.csrf_token(), "name": name, "card": "", "queue": "cpu", "active": "on",
              "kept_file": ""}
    body, content_type = multipart(fields, "file", f"{name}.safetensors", data)
    request = urllib.request.Request(site.base + "admin/networks/network/add/", data=body,
                                     headers={"Content-Type": content_type})
    with site.opener.open(request, timeout=300) as response:
        if urllib.parse.urlsplit(response.url).path.endswith("/add/"):
            raise RuntimeError(f"the admin refused the upload:\n{response.read().decode()[-2000:]}")


def network_status(site: Site, name: str) -> str:
    return next(n["status"] for n in get_json(site, "api/networks/")["networks"] if n["name"] == name)


def measure(site: Site, jobs: list[str], name: str, data: bytes, limit_s: float) -> dict:
    """Upload ``data`` as ``name``; seconds from the upload's answer until its check ended."""
    upload(site, name, data)
    answered = time.monotonic()
    while (status := network_status(site, name)) == "checking" and time.monotonic() - answered < limit_s:
        time.sleep(0.5)
    waited = round(time.monotonic() - answered, 1)
    running = [get_json(site, f"api/jobs/{job}/")["job"]["status"] == "running" for job in jobs]
    return {"status": status, "check_s": waited if status != "checking" else None, "waited_s": waited,
            "analyses_running_then": sum(running), "analyses": len(jobs)}


def one_run(args, folder: Path) -> dict:
    weights = folder / "weights"
    weights.mkdir()
    shutil.copy(ROOT / "weights" / f"{args.network}.safetensors", weights)
    site = Site(args.root, folder / "var", folder / "serve.log", 0.0, weights=weights)
    try:
        first_s, _ = site.first_answer()
        idle_s = wait_background_idle(site)
        print(f"first answer {first_s} s; the start's background work ended {idle_s} s later", flush=True)
        jobs = start_analyses(site, args.analyses, first_plies(GAME.read_text(), args.plies), args.network,
                              args.budget)
        print(f"{len(jobs)} analyses running", flush=True)
        create_admin(site)
        log_in(site)
        result = measure(site, jobs, "bench-upload", renamed_copy(ROOT / "weights" / "cb-sv.safetensors",
                                                                  uuid.uuid4().hex), args.wait_limit)
        return {"first_answer_s": first_s, "background_idle_s": idle_s, **result,
                "load_1min": round(os.getloadavg()[0], 2)}
    finally:
        site.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose serve is measured")
    parser.add_argument("--network", default="cf-small", help="the one shipped network the site registers")
    parser.add_argument("--analyses", type=int, default=2, help="analyses running (serve's users' worker has 2 slots)")
    parser.add_argument("--plies", type=int, default=80)
    parser.add_argument("--budget", type=int, default=12_000, help="MCTS nodes per position")
    parser.add_argument("--wait-limit", type=float, default=900.0, help="seconds to wait for the check")
    parser.add_argument("--out", type=Path, default=ROOT / "artifacts" / "bench" / "upload_check_wait.json")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="sightline-upload-wait-"))
    try:
        run = one_run(args, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    result = {"root": str(args.root), "cpus": os.cpu_count(), "network": args.network, "plies": args.plies,
              "budget": args.budget, **run}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))
    check = (f"checked ({run['status']}) {run['check_s']} s after the upload's answer" if run["check_s"] is not None
             else f"still checking {run['waited_s']} s after the upload's answer")
    print(f"{check}; {run['analyses_running_then']} of {run['analyses']} analyses still running then")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
