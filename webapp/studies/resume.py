"""A study whose worker is gone is queued again and resumes from its stored items.

The worker holds the study's lease (``webapp.ondemand.lease``, the on-demand lane's) and renews it
while it runs; the task is acknowledged late, so the broker hands a killed worker's message to another.
Besides that, a running study whose lease ran out, or a queued one no worker took within the broker's
visibility timeout, is sent again: by whoever reads it (its page, its poll, the API) and by the
reaper thread of every studies worker (``webapp.studies.tasks``). One conditional UPDATE takes the
re-sending, so it is sent once; the lease then lets only one delivery run it.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from webapp.studies.models import Study
from workers import dispatch

log = logging.getLogger(__name__)

TASK = "sightline.run_study"


def lost() -> Q:
    """Studies with no live worker and no message on its way."""
    now = timezone.now()
    dead = Q(status=Study.Status.RUNNING) & (Q(lease_until__lt=now) | Q(lease_until__isnull=True))
    unsent = Q(status=Study.Status.QUEUED, lease_owner="",
               queued_at__lt=now - timedelta(seconds=settings.SIGHTLINE_VISIBILITY_TIMEOUT_S))
    return dead | unsent


def active():
    """The studies counted against the limits: queued or running, and not lost."""
    return Study.objects.filter(status__in=Study.ACTIVE).exclude(lost())


def send(study: Study) -> None:
    """Queue ``study``'s task on the studies' lane (raises ``BrokerUnavailable``)."""
    dispatch.send_task(TASK, [str(study.pk)], queue=settings.SIGHTLINE_STUDIES_QUEUE)


def requeue_if_lost(study: Study) -> bool:
    """Send ``study`` again when its worker is gone; True when this call sent it."""
    taken = Study.objects.filter(lost(), pk=study.pk, lease_until=study.lease_until, queued_at=study.queued_at)
    if not taken.update(status=Study.Status.QUEUED, lease_owner="", lease_until=None, queued_at=timezone.now()):
        return False
    log.warning("study %s has no live worker; queueing it again (it resumes from its stored items)", study.pk)
    try:
        send(study)
    except dispatch.BrokerUnavailable:  # the next read or reaper round tries again
        log.warning("study %s: the queue is unavailable; not sent", study.pk)
        return False
    return True


def reap_once() -> int:
    """Queue every lost study again; how many were sent."""
    return sum(requeue_if_lost(study) for study in Study.objects.filter(lost()))
