"""Fair use of the on-demand workers (issue 41, item 1): each client and the site may have so much work
pending, counted by its cost (a 512-position scan is 512 positions' worth), whatever its age; a 429
says when to ask again; the work goes to the on-demand lane, not the analyses' queue."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from datetime import timedelta

import chess
import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from analysis.lens.checks import MAX_POOL
from tests.web.test_lens_api import GAME, job  # noqa: F401 - fixture: a cf-tiny job
from webapp.jobs.models import LensResult
from webapp.lens import views
from webapp.ondemand import lease
from webapp.ondemand.clients import client_key
from webapp.ondemand.limits import LIMITS, seconds_until_room

pytestmark = pytest.mark.django_db

SCAN = LIMITS["lens"].cost(MAX_POOL)  # one 512-position scan's worker seconds


@pytest.fixture
def sent(monkeypatch):
    """(task, row id, queue) of each task handed to the broker."""
    tasks = []
    monkeypatch.setattr("workers.dispatch.send_task",
                        lambda name, args, queue, task_id=None: tasks.append((name, args[2], queue)))
    return tasks


def visitor(n: int) -> Client:
    """A client without cookies, known by its address."""
    return Client(REMOTE_ADDR=f"10.0.0.{n}")


def scan(client: Client, job, index: int):
    """A where-else scan of unit ``index`` over an uploaded list of ``MAX_POOL`` positions."""
    body = {"layer": 0, "index": index, "fens": [chess.STARTING_FEN] * MAX_POOL}
    return client.post(f"/api/jobs/{job.id}/nodes/0/lens/where-else/", json.dumps(body),
                       content_type="application/json")


def test_a_scan_counts_its_positions_and_a_second_client_is_not_refused(job, sent):
    most = int(LIMITS["lens"].per_client_s // SCAN)
    assert most >= 2 and MAX_POOL == 512
    flooder = visitor(1)
    for index in range(most):
        assert scan(flooder, job, index).status_code == 202
    refused = scan(flooder, job, most)
    assert refused.status_code == 429 and "lens computations queued" in refused.json()["error"]
    # The room frees when the client's first scan is done: the work up to it, shared by the slots.
    assert int(refused["Retry-After"]) == math.ceil(SCAN / settings.SIGHTLINE_ONDEMAND_SLOTS)
    assert f"Try again in {refused['Retry-After']} s." in refused.json()["error"]
    assert scan(visitor(2), job, most).status_code == 202  # another client is not held by the first
    rows = LensResult.objects.order_by("pk")
    assert [row.cost for row in rows] == [SCAN] * (most + 1)
    assert {row.client for row in rows[:most]} == {client_key(flooder.get("/").wsgi_request)}
    assert rows[most].client != rows[0].client
    assert {queue for _, _, queue in sent} == {settings.SIGHTLINE_ONDEMAND_QUEUE} and len(sent) == most + 1


def test_the_site_has_a_limit_of_its_own(job, sent, monkeypatch):
    monkeypatch.setattr(views, "LENS", replace(views.LENS, limit=replace(views.LENS.limit, per_site_s=3 * SCAN)))
    for n in range(3):
        assert scan(visitor(n), job, n).status_code == 202
    refused = scan(visitor(9), job, 9)
    assert refused.status_code == 429 and "The site has lens computations queued" in refused.json()["error"]
    assert int(refused["Retry-After"]) == math.ceil(SCAN / settings.SIGHTLINE_ONDEMAND_SLOTS)
    LensResult.objects.filter(pk=LensResult.objects.order_by("pk").first().pk).update(status="ready")
    assert scan(visitor(9), job, 9).status_code == 202  # done work stops counting


def test_pending_work_counts_whatever_its_age_while_its_worker_lives(job, sent):
    most = int(LIMITS["lens"].per_client_s // SCAN)
    for index in range(most):
        scan(visitor(1), job, index)
    an_hour_ago = timezone.now() - timedelta(hours=1)
    LensResult.objects.update(created_at=an_hour_ago, lease_owner="alive", lease_until=lease.until())
    assert scan(visitor(1), job, most).status_code == 429  # a long computation still counts
    LensResult.objects.update(lease_until=timezone.now() - timedelta(seconds=1))  # its worker died
    assert scan(visitor(1), job, most).status_code == 202


def test_retry_after_is_the_work_ahead_of_the_room_shared_by_the_slots(settings):
    settings.SIGHTLINE_ONDEMAND_SLOTS = 2
    rows = [(10.0, "other"), (4.0, "me"), (30.0, "other"), (6.0, "me")]
    assert seconds_until_room(rows, 3.0, "me") == 7  # 10 + 4 done before 3 s of mine is freed: 14 / 2
    assert seconds_until_room(rows, 5.0, "me") == 25  # all four: 50 / 2
    assert seconds_until_room(rows, 5.0) == 5  # anyone's: the first row frees it
    assert seconds_until_room([(5000.0, "me")], 1.0, "me") == 600  # at most ten minutes
    assert seconds_until_room([(0.1, "me")], 0.1, "me") == 1  # at least a second


def test_one_large_request_is_taken_when_its_client_has_nothing_pending(job, sent, monkeypatch):
    monkeypatch.setattr(views, "LENS", replace(views.LENS, limit=replace(views.LENS.limit, per_client_s=SCAN / 2)))
    assert scan(visitor(1), job, 0).status_code == 202
    assert scan(visitor(1), job, 1).status_code == 429


def test_a_signed_in_user_is_one_client_wherever_they_ask_from(job, sent, django_user_model):
    user = django_user_model.objects.create_user("ada", password="pw-for-tests")
    here, there = visitor(1), visitor(2)
    here.force_login(user)
    there.force_login(user)
    keys = {client_key(c.get("/").wsgi_request) for c in (here, there)}
    assert len(keys) == 1 and keys != {client_key(visitor(1).get("/").wsgi_request)}


def test_a_request_racing_another_is_counted_after_it_and_leaves_nothing_when_refused(job, sent, monkeypatch):
    """Two requests at once: each row is written first, then counted with the rows written before it,
    so the later one is refused (and its row withdrawn) even when both passed a count made before."""
    limit = views.LENS.limit
    monkeypatch.setattr(views, "LENS", replace(views.LENS, limit=replace(limit, per_client_s=SCAN)))
    flooder = visitor(1)
    racer = LensResult.objects.get_or_create
    key = client_key(flooder.get("/").wsgi_request)

    def raced(**kwargs):  # the other request's row lands between this one's look-up and its write
        LensResult.objects.create(position_key="other", network_checksum=job.network.checksum, request_key="r",
                                  client=key, cost=SCAN)
        return racer(**kwargs)

    monkeypatch.setattr(LensResult.objects, "get_or_create", raced)
    refused = scan(flooder, job, 0)
    assert refused.status_code == 429 and "each visitor may queue" in refused.json()["error"]
    assert list(LensResult.objects.values_list("position_key", flat=True)) == ["other"] and not sent
