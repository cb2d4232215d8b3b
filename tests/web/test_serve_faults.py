"""``manage.py serve`` under faults: a killed worker is restarted while the site keeps serving, a
job interrupted by Ctrl+C resumes after the next ``serve`` (the embedded Redis keeps its queue),
and a job survives its worker, then Redis, then the web server being killed one after another
(the chaos test of issue 31)."""

from __future__ import annotations

import http.cookiejar
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.web.conftest import free_port
from tests.web.test_worker_faults import GAME  # 17 positions

# Real processes on a shared machine: more than pytest.ini's 300 s per test may be needed.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def _lane(cmdline: str) -> str:
    """Which of serve's Celery workers a command line is, by the queue it consumes (``-Q``)."""
    for lane in ("ondemand", "background", "studies"):
        if f" -Q {lane} " in cmdline:
            return lane
    return "worker"


class Serve:
    """One ``manage.py serve`` in its own process group, on a given var folder."""

    def __init__(self, root: Path, weights: Path, **extra_env: str):
        self.root, self.port = root, free_port()
        self.base = f"http://127.0.0.1:{self.port}/"
        self.log_path = root / f"serve-{self.port}.log"
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")}
        env.update(SIGHTLINE_VAR_DIR=str(root / "var"), SIGHTLINE_WEIGHTS_DIR=str(weights), PYTHONUNBUFFERED="1",
                   SIGHTLINE_BATCH_SIZE="4", **extra_env)
        self.process = subprocess.Popen([sys.executable, "manage.py", "serve", "--port", str(self.port)], cwd=ROOT,
                                        env=env, stdout=self.log_path.open("w"), stderr=subprocess.STDOUT,
                                        start_new_session=True)
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        try:
            wait_for(lambda: self.answers() or self.process.poll() is not None, 300, lambda: self.log)
            assert self.process.poll() is None, self.log[-4000:]
        except BaseException:
            self.stop()  # never leave a half-started site behind
            raise

    @property
    def log(self) -> str:
        return self.log_path.read_text()

    def answers(self) -> bool:
        try:
            with self.opener.open(self.base, timeout=5) as response:
                return response.status == 200
        except OSError:
            return False

    def submit(self, pgn: str, search: str, budget: int) -> str:
        """Posts the home form as a browser does; returns the job id."""
        self.opener.open(self.base, timeout=10).read()
        token = self._csrf()
        body = urllib.parse.urlencode({"pgn": pgn, "network": "material", "search": search, "budget": budget,
                                       "csrfmiddlewaretoken": token}).encode()
        with self.opener.open(self.base, data=body, timeout=30) as response:
            path = urllib.parse.urlsplit(response.url).path
        assert path.startswith("/jobs/"), path
        return path.strip("/").split("/")[1]

    def _csrf(self) -> str:
        for handler in self.opener.handlers:
            if isinstance(handler, urllib.request.HTTPCookieProcessor):
                return next(c.value for c in handler.cookiejar if c.name == "csrftoken")
        raise AssertionError("no cookie jar")

    def job(self, job_id: str) -> dict:
        with self.opener.open(f"{self.base}api/jobs/{job_id}/", timeout=10) as response:
            return json.load(response)["job"]

    def children(self) -> dict[str, int]:
        """{"worker"/"ondemand"/"background"/"web"/"redis": pid} of this serve's children, from /proc
        ("worker": the analyses' Celery worker; "ondemand" and "background": those lanes')."""
        found = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) != self.process.pid:
                continue
            name = _lane(cmdline) if "celery" in cmdline \
                else "web" if "uvicorn" in cmdline \
                else "redis" if "redis-server" in cmdline else None
            if name is not None:
                found[name] = int(entry.name)
        return found

    def interrupt(self) -> int:
        os.killpg(self.process.pid, signal.SIGINT)  # what a terminal's Ctrl+C does
        return self.process.wait(240)  # a busy machine: daphne and the worker each get up to 15 s

    def stop(self) -> None:
        if self.process.poll() is None:
            try:
                self.interrupt()
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def wait_for(condition, timeout: float, describe=lambda: "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s\n{describe()[-4000:]}")
        time.sleep(0.5)


@pytest.fixture
def site_folders(tmp_path, tiny_checkpoint):
    weights = tmp_path / "weights"
    weights.mkdir()
    shutil.copy(tiny_checkpoint, weights / "cf-tiny.safetensors")
    return tmp_path, weights


def test_a_killed_worker_is_restarted_and_the_site_keeps_serving(site_folders):
    serve = Serve(*site_folders)
    try:
        wait_for(lambda: "worker" in serve.children(), 120, lambda: serve.log)
        first = serve.children()["worker"]
        os.kill(first, signal.SIGKILL)
        wait_for(lambda: serve.children().get("worker") not in (None, first), 120, lambda: serve.log)
        assert serve.answers() and serve.process.poll() is None
        assert "the worker process exited with status -9" in serve.log
        job_id = serve.submit("1. e4 e5 2. Nf3 *", "value", 1)  # the new worker takes work
        wait_for(lambda: serve.job(job_id)["status"] == "done", 120, lambda: serve.log)
    finally:
        serve.stop()


def test_ctrl_c_mid_job_then_the_next_serve_resumes_it(site_folders):
    serve = Serve(*site_folders)
    try:
        # Depth 4 over 40 positions (the most the job bound allows at that depth): alpha-beta batches its
        # leaf values in the worker as on the command line now, and 17 positions finished before Ctrl+C.
        job_id = serve.submit(LONG_GAME, "alphabeta", 4)
        wait_for(lambda: serve.job(job_id)["searched"] >= 1, 120, lambda: serve.log)
    finally:
        assert serve.interrupt() == 0, serve.log[-4000:]
    assert "NotImplementedError" not in serve.log, serve.log[-4000:]
    assert "stopped" in serve.log
    assert "interrupted" in serve.log  # the job stopped at Ctrl+C and handed its lease back
    again = Serve(*site_folders)
    try:
        wait_for(lambda: again.job(job_id)["status"] != "running", 300, lambda: again.log)
        job = again.job(job_id)
        assert job["status"] == "done", job
        assert job["searched"] == job["total"] == 40
    finally:
        again.stop()


# 40 positions: the job must outlast three kills and their restarts (a worker takes seconds to start).
LONG_GAME = ("1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O 9. h3 Nb8 "
             "10. d4 Nbd7 11. c4 c6 12. cxb5 axb5 13. Nc3 Bb7 14. Bg5 b4 15. Nb1 h6 16. Bh4 c5 17. dxe5 Nxe4 "
             "18. Bxe7 Qxe7 19. exd6 Qf6 20. Nbd2 *")
# The job's lease (and the reaper's period) short, so a killed worker's job is sent again within seconds.
CHAOS_ENV = {"SIGHTLINE_JOB_LEASE_S": "5", "SIGHTLINE_REAP_INTERVAL_S": "1"}


def unfinished_rows(database: Path) -> dict[str, int]:
    """Rows of every kind that is still waiting for a worker (none once everything is final)."""
    queries = {"analysis jobs": "SELECT COUNT(*) FROM analyses_analysisjob WHERE status IN ('queued', 'running')",
               "attention maps": "SELECT COUNT(*) FROM analyses_attentionmap WHERE status = 'pending'",
               "deeper searches": "SELECT COUNT(*) FROM analyses_deepsearch WHERE status IN ('queued', 'running')",
               "head atlases": "SELECT COUNT(*) FROM networks_headatlas WHERE status IN ('queued', 'running')",
               "network checks": "SELECT COUNT(*) FROM networks_network WHERE status = 'checking'"}
    with sqlite3.connect(database) as db:
        return {what: n for what, query in queries.items() if (n := db.execute(query).fetchone()[0])}


def job_row(database: Path, job_id: str) -> dict:
    with sqlite3.connect(database) as db:
        db.row_factory = sqlite3.Row
        row = db.execute("SELECT status, evaluated, searched, total_positions FROM analyses_analysisjob "
                         "WHERE replace(id, '-', '') = ?", (job_id.replace("-", ""),)).fetchone()
    return dict(row)


def test_chaos_worker_then_redis_then_web_killed_mid_job(site_folders):
    """SIGKILL the worker, then Redis, then the web server while one job runs: serve restarts each,
    the job finishes with every ply searched exactly once, the job's page and API show it whole,
    and no row is left waiting."""
    serve = Serve(*site_folders, **CHAOS_ENV)
    database = site_folders[0] / "var" / "sightline.sqlite3"
    timings: dict[str, float] = {}
    try:
        job_id = serve.submit(LONG_GAME, "alphabeta", 4)  # about a second a position: kills land mid-job
        start = time.monotonic()
        progress = lambda: job_row(database, job_id)["searched"]  # noqa: E731 (read without the web server)
        for name in ("worker", "redis", "web"):
            before = progress()
            wait_for(lambda: progress() > before, 180, lambda: serve.log)  # the job moves before each kill
            row = job_row(database, job_id)
            assert row["status"] == "running" and row["searched"] < row["total_positions"], (name, row)
            pid = serve.children()[name]
            os.kill(pid, signal.SIGKILL)
            killed = time.monotonic()
            wait_for(lambda: serve.children().get(name) not in (None, pid), 120, lambda: serve.log)
            if name == "web":
                wait_for(serve.answers, 120, lambda: serve.log)
            timings[name] = time.monotonic() - killed
            assert f"the {name} process exited with status -9" in serve.log
        wait_for(lambda: job_row(database, job_id)["status"] != "running", 300, lambda: serve.log)
        timings["job"] = time.monotonic() - start
        job = serve.job(job_id)
        assert job["status"] == "done", (job, serve.log[-4000:])
        # Every ply exactly once: a job run twice at once counted past its total (254/137 in the probe).
        assert job["evaluated"] == job["searched"] == job["total"] == 40, job
        state = json.load(serve.opener.open(f"{serve.base}api/jobs/{job_id}/", timeout=10))
        assert sorted(map(int, state["results"])) == list(range(40))
        assert all("eval" in r and "search" in r for r in state["results"].values())
        with serve.opener.open(f"{serve.base}jobs/{job_id}/", timeout=10) as page:
            assert page.status == 200
        assert unfinished_rows(database) == {}
        assert serve.process.poll() is None
        print("chaos timings (s): " + ", ".join(f"{k} {v:.1f}" for k, v in timings.items()))
    finally:
        serve.stop()
