"""Lost on-demand work resumes within its lease and never runs twice (issue 41, item 5): the worker that
claims a row's lease computes it; another delivery of the same row (the broker's redelivery, a message
sent again) leaves it; a row whose lease ran out is queued again by the next poll."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from tests.web.test_lens_api import GAME, job, lens_url  # noqa: F401 - fixture: a cf-tiny job
from webapp.jobs.models import LensResult
from webapp.lens import tasks
from webapp.ondemand import lease
from webapp.ondemand.run import CLAIMED

pytestmark = pytest.mark.django_db

LOGIT = "?moves=e7e5"


@pytest.fixture
def sent(monkeypatch):
    """The args (job, node, row) of each lens task handed to the broker."""
    tasks_sent = []
    monkeypatch.setattr("workers.dispatch.send_task", lambda name, args, queue, task_id=None: tasks_sent.append(args))
    return tasks_sent


@pytest.fixture
def computed(monkeypatch):
    """The rows the lens's answer was computed for, in order (the real answer, counted)."""
    rows, real = [], tasks.lens_answer

    def counted(adapter, board, request):
        rows.append(board.fen())
        return real(adapter, board, request)

    monkeypatch.setattr(tasks, "lens_answer", counted)
    return rows


def test_a_second_delivery_while_the_first_computes_leaves_the_row_alone(client, job, sent, computed, monkeypatch):
    assert client.get(lens_url(job, 1, "logit", LOGIT)).status_code == 202
    args = sent[0]
    second, real = [], tasks.lens_answer

    def first_worker(adapter, board, request):  # a second worker gets the same row meanwhile
        second.append(tasks.compute_lens(*args))
        return real(adapter, board, request)

    monkeypatch.setattr(tasks, "lens_answer", first_worker)
    assert tasks.compute_lens(*args) == "ready"
    assert second == [CLAIMED] and len(computed) == 1
    assert tasks.compute_lens(*args) == "ready" and len(computed) == 1  # a redelivery once done: nothing


def test_a_row_whose_lease_ran_out_is_queued_again_by_the_next_poll_and_computed_once(client, job, sent, computed):
    url = lens_url(job, 1, "logit", LOGIT)
    assert client.get(url).status_code == 202
    row = LensResult.objects.get()
    held = LensResult.objects.filter(pk=row.pk, status=LensResult.Status.PENDING)
    assert lease.claim(held, "dead-worker")  # a worker took it, then was killed
    assert client.get(url).status_code == 202 and len(sent) == 1  # its lease is live: nobody else starts it
    LensResult.objects.filter(pk=row.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert client.get(url).status_code == 202 and len(sent) == 2  # ran out: the next poll queues it again
    requeued = LensResult.objects.get()
    assert requeued.status == "pending" and requeued.lease_owner == "" and requeued.lease_until is None
    assert tasks.compute_lens(*sent[1]) == "ready" and len(computed) == 1
    assert tasks.compute_lens(*sent[0]) == "ready" and len(computed) == 1  # the first message, redelivered
    assert not lease.renew(held, "dead-worker")  # the dead worker's heartbeat, were it to come back
    assert client.get(url).status_code == 200


def test_the_lease_is_short_enough_to_resume_within_thirty_seconds():
    assert lease.lease_seconds() <= 30 and settings.SIGHTLINE_ONDEMAND_LEASE_S == lease.lease_seconds()


def test_only_the_holder_renews_and_a_lost_lease_stops_the_heartbeat(client, job, sent):
    client.get(lens_url(job, 1, "logit", LOGIT))
    held = LensResult.objects.filter(status=LensResult.Status.PENDING)
    assert lease.claim(held, "a") and not lease.claim(held, "b")
    LensResult.objects.update(lease_until=timezone.now())
    assert lease.renew(held, "a") and not lease.renew(held, "b")
    assert LensResult.objects.get().lease_until > timezone.now() + timedelta(seconds=lease.lease_seconds() / 2)
    beat = lease.Heartbeat(lambda: False, 0.01, "test")
    with beat:
        assert beat.lost.wait(5)
