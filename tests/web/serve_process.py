"""``manage.py serve`` in a child process for the browser tests: started on its own SQLite and
embedded Redis, waited for until the home page answers, and stopped as Ctrl+C stops it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.web.conftest import free_port

START_S = 300  # a loaded 2-core machine took over 2 minutes to start serve


def start_serve(root: Path, weights: Path, extra_env: dict[str, str], args: tuple[str, ...] = ("--concurrency", "2"),
                start_s: float = START_S) -> tuple[subprocess.Popen, str, dict[str, str]]:
    """(the process, its base URL, its environment), once the home page answers 200; the test fails
    with the end of serve's log if it never does within ``start_s``."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")}
    env.update(SIGHTLINE_VAR_DIR=str(root / "var"), SIGHTLINE_WEIGHTS_DIR=str(weights), PYTHONUNBUFFERED="1",
               **extra_env)
    log = (root / "serve.log").open("w")
    process = subprocess.Popen([sys.executable, "manage.py", "serve", "--port", str(port), *args],
                               cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + start_s
    while True:
        try:
            with urllib.request.urlopen(base, timeout=2) as response:
                if response.status == 200:
                    return process, base, env
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            stop_serve(process)
            pytest.fail(f"serve did not come up:\n{(root / 'serve.log').read_text()[-4000:]}")
        time.sleep(0.3)


def stop_serve(process: subprocess.Popen) -> None:
    """Ctrl+C to serve's process group, then a kill if it has not ended within a minute."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGINT)
    try:
        process.wait(60)
    except subprocess.TimeoutExpired:
        process.kill()  # its children get SIGTERM from the parent-death signal
        process.wait()
