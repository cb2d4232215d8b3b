"""A job's lease on its database row: the job runs at most once at a time.

The broker may deliver a job's task more than once (a redelivery after its
visibility timeout, a message restored at a worker's shutdown, a dispatch by
the reaper); only the delivery that takes the lease runs it. The holder renews
the lease every third of its length (``webapp.jobs.run.heartbeat``); a lease that runs
out means its worker is gone, and ``webapp.jobs.run.reaper`` dispatches the job again.
Every change is one conditional UPDATE, so two workers never both win.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from webapp.jobs.models import AnalysisJob

ACTIVE = (AnalysisJob.Status.QUEUED, AnalysisJob.Status.RUNNING)


def lease_seconds() -> float:
    return settings.SIGHTLINE_JOB_LEASE_S


def new_owner() -> str:
    return uuid.uuid4().hex


def _until():
    return timezone.now() + timedelta(seconds=lease_seconds())


def claim(job_id, owner: str) -> bool:
    """queued/running -> running under ``owner``, when nobody holds a live lease.

    Counts start from zero: a resumed job recounts what it finds in the cache."""
    free = Q(lease_owner="") | Q(lease_until__isnull=True) | Q(lease_until__lt=timezone.now())
    return bool(AnalysisJob.objects.filter(free, pk=job_id, status__in=ACTIVE).update(
        status=AnalysisJob.Status.RUNNING, lease_owner=owner, lease_until=_until(), started_at=timezone.now(),
        evaluated=0, searched=0, error=""))


def renew(job_id, owner: str) -> bool:
    """False when the lease is no longer ours (it ran out and another worker took the job, or the
    job was cancelled): the holder must stop at once."""
    return bool(AnalysisJob.objects.filter(pk=job_id, lease_owner=owner, status=AnalysisJob.Status.RUNNING)
                .update(lease_until=_until()))


def release(job_id, owner: str) -> None:
    """Hand an unfinished job back (its worker is shutting down): free at once for the next delivery."""
    AnalysisJob.objects.filter(pk=job_id, lease_owner=owner).update(lease_owner="", lease_until=timezone.now())


def finish(job_id, owner: str, *, total: int | None = None, **fields) -> bool:
    """Write the job's final state, only while the lease is ours and the job is still running
    (and, with ``total``, still has that many positions: none was added while it ran)."""
    held = AnalysisJob.objects.filter(pk=job_id, lease_owner=owner, status=AnalysisJob.Status.RUNNING)
    if total is not None:
        held = held.filter(total_positions=total)
    return bool(held.update(lease_owner="", lease_until=None, finished_at=timezone.now(), **fields))


def hold_for_dispatch(job_id, expected_until) -> bool:
    """Mark a job as dispatched again (by the reaper), unowned, with a fresh deadline for some worker
    to claim it; False when another reaper got there first (``lease_until`` changed)."""
    return bool(AnalysisJob.objects.filter(pk=job_id, status__in=ACTIVE, lease_until=expected_until)
                .update(lease_owner="", lease_until=_until()))
