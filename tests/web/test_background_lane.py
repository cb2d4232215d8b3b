"""Issue 41 item 2, end to end: background work has a lane of its own. A real ``serve`` whose users' worker
(one slot) is busy on a long analysis; an admin uploads a network through the admin's add form, and its
check ends (status ready) while that analysis is still running: it neither waited behind it nor took
its slot. With the check on the users' queue, as before, the upload stays "checking" until the analysis ends."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from urllib.parse import urlsplit

import pytest

from tests.conftest import ROOT
from tests.web.serve_process import start_serve, stop_serve
from tests.web.test_browser import browser  # noqa: F401 - fixture: Chromium

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(1200)]

NETWORK = "cf-small"  # the site's one network: the start's background work is its head atlas
GAME = ROOT / "bench" / "games" / "kasparov-topalov-1999.pgn"  # 87 plies at 11,000 MCTS nodes: many minutes
BUDGET = "11000"  # within one job's million nodes
CHECK_LIMIT_S = 600  # generous: the start's head atlas may still hold the background lane's one slot
PASSWORD = "lane-test-password"


def read_json(page, url: str) -> dict:
    """GET with the browser's cookies (a job's state is its submitter's)."""
    response = page.request.get(url, timeout=60_000)
    assert response.ok, f"{url}: {response.status}"
    return response.json()


def job_status(page, base: str, job: str) -> str:
    return read_json(page, f"{base}api/jobs/{job}/")["job"]["status"]


def network_status(page, base: str, name: str) -> str:
    return next(n["status"] for n in read_json(page, f"{base}api/networks/")["networks"] if n["name"] == name)


def start_long_analysis(page, base: str) -> str:
    """The home form with MCTS at a large budget; the job's id once it runs."""
    page.goto(base)
    page.fill("#id_pgn", GAME.read_text())
    page.select_option("#id_search", "mcts")
    page.fill("#id_budget", BUDGET)
    page.click("button[type=submit]")
    page.wait_for_url("**/jobs/**", timeout=120_000)
    job = urlsplit(page.url).path.strip("/").split("/")[-1]
    deadline = time.monotonic() + 300
    while (status := job_status(page, base, job)) != "running":
        assert status == "queued" and time.monotonic() < deadline, f"the analysis did not start: {status}"
        time.sleep(1)
    return job


def upload_as_admin(page, base: str, env: dict, upload) -> None:
    subprocess.run([sys.executable, "manage.py", "createsuperuser", "--noinput", "--username", "admin",
                    "--email", "admin@example.com"], cwd=ROOT, check=True, capture_output=True,
                   env={**env, "DJANGO_SUPERUSER_PASSWORD": PASSWORD})
    page.goto(f"{base}admin/login/?next=/admin/")
    page.fill("#id_username", "admin")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(f"{base}admin/")
    page.goto(f"{base}admin/networks/network/add/")
    page.fill("#id_name", "uploaded")
    page.set_input_files("#id_file", str(upload))
    page.click("input[name=_save]")
    messages = page.wait_for_selector("ul.messagelist", timeout=120_000)
    assert "A worker is checking uploaded" in messages.inner_text()


def test_an_upload_is_checked_while_the_users_worker_is_busy_on_an_analysis(tmp_path, browser):  # noqa: F811
    weights = tmp_path / "weights"
    weights.mkdir()
    shutil.copy(ROOT / "weights" / f"{NETWORK}.safetensors", weights)
    upload = tmp_path / "uploaded.safetensors"
    shutil.copy(ROOT / "weights" / "cb-sv.safetensors", upload)  # not registered here: a new checksum
    process, base, env = start_serve(tmp_path, weights, {}, args=("--concurrency", "1"))
    try:
        page = browser.new_page()
        job = start_long_analysis(page, base)
        upload_as_admin(page, base, env, upload)
        deadline = time.monotonic() + CHECK_LIMIT_S
        while (status := network_status(page, base, "uploaded")) == "checking":
            assert job_status(page, base, job) == "running", "the analysis ended before the upload was checked"
            assert time.monotonic() < deadline, "the upload was not checked while the analysis ran"
            time.sleep(1)
        assert status == "ready"
        assert job_status(page, base, job) == "running"  # checked before the analysis finished
        log = (tmp_path / "serve.log").read_text()
        assert "sightline.check_network" in log and "sightline.run_analysis" in log
    finally:
        stop_serve(process)
