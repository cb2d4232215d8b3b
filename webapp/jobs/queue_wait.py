"""Why a queued analysis waits, in words for its page: the analyses ahead of it for the users' worker
slots, and about how long until one is free (each one's positions left times the site's measured cost,
``webapp.jobs.estimates``). Background work and on-demand work (lens, attention, lc0 comparisons,
deeper searches) have lanes and workers of their own, so only analyses hold the users' slots and only
analyses are counted."""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from django.conf import settings

from webapp.jobs.estimates import estimate
from webapp.jobs.models import AnalysisJob


@dataclass(frozen=True)
class Wait:
    ahead: int  # analyses running or queued before this one
    seconds: float | None  # until a slot is free for it; None: a cost ahead is not measured yet

    def sentence(self) -> str:
        what = f"queued behind {self.ahead} {'analysis' if self.ahead == 1 else 'analyses'}"
        return what if self.seconds is None else f"{what}, about {_duration(self.seconds)}"


def _duration(seconds: float) -> str:
    return f"{max(1, round(seconds))} s" if seconds < 90 else f"{round(seconds / 60)} min"


def remaining_seconds(job: AnalysisJob) -> float | None:
    """The job's positions left to search times the measured cost of one; None when nothing is measured."""
    per = estimate(job.network, job.search, job.budget).seconds_per_position
    left = max(0, (job.total_positions or len(job.nodes)) - job.searched)
    return None if per is None else left * per


def wait_of(job: AnalysisJob, slots: int | None = None) -> Wait | None:
    """The wait of a queued job, or None when it need not wait (a slot is free for it) or is not queued.

    The running analyses hold the slots (``SIGHTLINE_WORKER_SLOTS``, the users' worker concurrency);
    the ones queued before it take each slot as it frees, in order; it starts when the next one frees."""
    if job.status != AnalysisJob.Status.QUEUED:
        return None
    slots = slots or settings.SIGHTLINE_WORKER_SLOTS
    others = AnalysisJob.objects.exclude(pk=job.pk).select_related("network")
    running = list(others.filter(status=AnalysisJob.Status.RUNNING))
    earlier = list(others.filter(status=AnalysisJob.Status.QUEUED, created_at__lt=job.created_at)
                   .order_by("created_at"))
    ahead = len(running) + len(earlier)
    if ahead < slots:
        return None
    costs = [remaining_seconds(j) for j in running + earlier]
    if any(c is None for c in costs):
        return Wait(ahead, None)
    free_at = sorted(costs[:len(running)])[:slots] + [0.0] * max(0, slots - len(running))
    heapq.heapify(free_at)
    for cost in costs[len(running):]:  # each earlier job takes the slot that frees first
        heapq.heappush(free_at, heapq.heappop(free_at) + cost)
    return Wait(ahead, heapq.heappop(free_at))


def waiting_sentence(job: AnalysisJob) -> str:
    """The sentence for the page and the API ("" when the job is not waiting)."""
    wait = wait_of(job)
    return wait.sentence() if wait else ""
