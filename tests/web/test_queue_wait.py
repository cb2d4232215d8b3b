"""A queued analysis says what it waits behind and for about how long (issue 37 item 1): from the
analyses holding or queued for the users' worker slots and the site's measured costs, in the job's
status (the page's snapshot, the websocket and the API) and on the page."""

from __future__ import annotations

import pytest
from django.db.models import F

from tests.web.conftest import OPERA_GAME
from tests.web.test_browser import browser  # noqa: F401 - fixture: Chromium
from webapp.jobs.models import AnalysisJob, PositionResult
from webapp.jobs.queue_wait import wait_of

SECONDS_PER_POSITION = 3.4  # the median of the stored mcts:200 searches below


@pytest.fixture
def measured(material_network):
    for i, ms in enumerate((3000.0, 3400.0, 9000.0)):
        PositionResult.objects.create(position_key=f"wait-{i}", network_checksum=material_network.checksum,
                                      settings_key="mcts:200", data={}, compute_ms=ms)
    return material_network


def job(network, status=AnalysisJob.Status.QUEUED, left: int | None = None) -> AnalysisJob:
    """A job of the Opera game with ``left`` positions still to search."""
    from webapp.jobs.gameinput import parse_pgn
    from webapp.jobs.jobs import create_job

    made = create_job(parse_pgn(OPERA_GAME), network, "mcts", 200, dispatch=False)
    total = made.total_positions
    AnalysisJob.objects.filter(pk=made.pk).update(status=status, searched=total - (total if left is None else left))
    return AnalysisJob.objects.get(pk=made.pk)


@pytest.mark.django_db
def test_a_job_waits_for_the_slot_that_frees_first(measured, settings):
    settings.SIGHTLINE_WORKER_SLOTS = 2
    job(measured, AnalysisJob.Status.RUNNING, left=10)  # 34 s left
    job(measured, AnalysisJob.Status.RUNNING, left=5)  # 17 s left
    waiting = job(measured)
    wait = wait_of(waiting)
    assert wait.ahead == 2 and wait.seconds == pytest.approx(5 * SECONDS_PER_POSITION)
    assert wait.sentence() == "queued behind 2 analyses, about 17 s"


@pytest.mark.django_db
def test_a_free_slot_means_no_wait(measured, settings):
    settings.SIGHTLINE_WORKER_SLOTS = 2
    job(measured, AnalysisJob.Status.RUNNING, left=10)
    assert wait_of(job(measured)) is None
    assert wait_of(job(measured, AnalysisJob.Status.RUNNING, left=3)) is None  # only queued jobs wait


@pytest.mark.django_db
def test_the_jobs_queued_earlier_go_first(measured, settings):
    settings.SIGHTLINE_WORKER_SLOTS = 1
    job(measured, AnalysisJob.Status.RUNNING, left=10)  # 34 s
    first = job(measured)  # every position still to search
    second = job(measured)
    assert wait_of(first).sentence() == "queued behind 1 analysis, about 34 s"
    assert wait_of(second).ahead == 2
    assert wait_of(second).seconds == pytest.approx((10 + first.total_positions) * SECONDS_PER_POSITION)
    minutes = round((10 + first.total_positions) * SECONDS_PER_POSITION / 60)
    assert wait_of(second).sentence() == f"queued behind 2 analyses, about {minutes} min"


@pytest.mark.django_db
def test_an_unmeasured_cost_says_only_behind_what(settings):
    from webapp.networks.models import Network

    settings.SIGHTLINE_WORKER_SLOTS = 1
    never = Network.objects.create(name="never-timed", family="chessformer", checksum="n" * 64,
                                   status=Network.Status.READY, input_encoding="lc0/INPUT_CLASSICAL_112_PLANE")
    job(never, AnalysisJob.Status.RUNNING, left=4)
    assert wait_of(job(never)).sentence() == "queued behind 1 analysis"


@pytest.mark.django_db
def test_the_page_and_the_api_carry_the_wait(measured, settings, client):
    settings.SIGHTLINE_WORKER_SLOTS = 1
    job(measured, AnalysisJob.Status.RUNNING, left=10)
    waiting = job(measured)
    api = client.get(f"/api/jobs/{waiting.pk}/").json()
    assert api["job"]["waiting"] == "queued behind 1 analysis, about 34 s"
    page = client.get(f"/jobs/{waiting.pk}/").content.decode()
    assert "queued behind 1 analysis, about 34 s" in page  # in the page's snapshot
    assert client.get(f"/api/jobs/{waiting.pk}/").json()["job"]["status"] == "queued"
    # What the page asks again while the job waits: the wait alone, not the whole state.
    assert client.get(f"/jobs/{waiting.pk}/wait/").json() == {"status": "queued",
                                                              "waiting": "queued behind 1 analysis, about 34 s"}
    assert client.get("/jobs/no-such-job/wait/").status_code == 404


@pytest.mark.browser
@pytest.mark.usefixtures("orm_beside_playwright")
def test_the_queued_page_says_behind_what_and_how_long(live_server, transactional_db, material_network, settings,
                                                       browser):  # noqa: F811
    settings.SIGHTLINE_WORKER_SLOTS = 1
    for i, ms in enumerate((3000.0, 3400.0, 9000.0)):
        PositionResult.objects.create(position_key=f"wait-{i}", network_checksum=material_network.checksum,
                                      settings_key="mcts:200", data={}, compute_ms=ms)
    job(material_network, AnalysisJob.Status.RUNNING, left=10)
    waiting = job(material_network)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{live_server.url}/jobs/{waiting.pk}/")
    page.wait_for_function("document.getElementById('eta').textContent.includes('queued behind')")
    assert page.text_content("#eta") == "queued behind 1 analysis, about 34 s"
    assert page.text_content("#job-status") == "queued"
    # Nothing is pushed while a job waits: the page asks again, and a longer wait ahead shows.
    AnalysisJob.objects.filter(status=AnalysisJob.Status.RUNNING).update(searched=F("total_positions") - 30)
    page.wait_for_function("document.getElementById('eta').textContent.includes('about 2 min')", timeout=30_000)
    assert errors == []
