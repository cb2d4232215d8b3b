"""Finds jobs nobody is running and dispatches them again; runs in every worker.

Two kinds: a running job whose lease ran out (its worker was killed, or Redis
lost the message while the worker stopped) or that never had one, and a queued job that was never
handed to the broker (the web process died between saving and sending it).
Each is taken with one conditional UPDATE (``lease.hold_for_dispatch``), so
with many workers each job is sent once per lease period; the lease then
makes sure only one delivery runs it.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta

from django.conf import settings
from django.db import close_old_connections
from django.db.models import Q
from django.utils import timezone

from webapp.jobs.run import lease
from webapp.jobs.models import AnalysisJob

log = logging.getLogger(__name__)


def stale_jobs():
    now = timezone.now()
    # No lease at all: a job left "running" by a version without leases.
    lost = Q(status=AnalysisJob.Status.RUNNING) & (Q(lease_until__lt=now) | Q(lease_until__isnull=True))
    never_sent = Q(status=AnalysisJob.Status.QUEUED, task_id="",
                   created_at__lt=now - timedelta(seconds=lease.lease_seconds())) & (
        Q(lease_until__isnull=True) | Q(lease_until__lt=now))
    return AnalysisJob.objects.select_related("network").filter(lost | never_sent)


def reap_once() -> int:
    """Dispatch every stale job again; returns how many were sent."""
    from webapp.jobs.jobs import dispatch_job

    sent = 0
    for job in stale_jobs():
        if lease.hold_for_dispatch(job.pk, job.lease_until):
            log.warning("job %s (%s) has no live worker; dispatching it again", job.pk, job.status)
            dispatch_job(job)
            sent += 1
    return sent


class Reaper:
    """A daemon thread calling ``reap_once`` every ``SIGHTLINE_REAP_INTERVAL_S`` seconds."""

    def __init__(self):
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="job-reaper", daemon=True)

    def start(self) -> "Reaper":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(settings.SIGHTLINE_REAP_INTERVAL_S):
            try:
                reap_once()
            except Exception:  # the database or the broker is away: next round
                log.warning("reaping stale jobs failed", exc_info=True)
            finally:
                close_old_connections()
