"""The request side of an on-demand computation: find its row, queue it when new, retried or
lost, and answer a pending one. The feature's view checks the request first and shapes the ready
answer; everything between is here, once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from django.http import HttpRequest, JsonResponse
from django.utils import timezone

from webapp.ondemand.limits import PendingLimit
from webapp.ondemand.models import PositionCache
from webapp.ondemand.refused import Refused
from workers import dispatch
from workers.dispatch import BrokerUnavailable

RETRY = "?retry=1"


@dataclass(frozen=True)
class OnDemand:
    """One kind of computation: its cache rows, the Celery task that fills one, its limit."""

    model: type[PositionCache]
    task: str  # the task's name; it is sent (job id, node id, row id)
    limit: PendingLimit
    what: str  # for a 503 while the queue is down: "this lens computation"
    reset: dict = field(default_factory=dict)  # what a (re)queued row starts from besides its status
    lost_waits_for_retry: bool = False  # a lost row is queued again only when asked (``?retry=1``)

    def serve(self, request: HttpRequest, job, node_id: int, key: dict, *, defaults: dict | None = None,
              check_new: Callable[[], Refused | None] | None = None) -> PositionCache:
        """The row for ``key``, queued first when it is new, failed and retried (``?retry=1``), or
        lost with its worker; ``check_new`` may refuse new work before the limit is counted.
        Raises ``Refused`` (429 over the limit, 503 when the queue is down)."""
        entry = self.model.objects.filter(**key).first()
        asked = request.GET.get("retry") == "1"
        lost = entry is not None and self.lost(entry) and (asked or not self.lost_waits_for_retry)
        retry = lost or entry is not None and asked and entry.status == self.model.Status.FAILED
        if entry is not None and not retry:
            return entry
        refusal = (check_new() if check_new else None) or self.limit.refusal(self.model, job)
        if refusal is not None:
            raise refusal
        if entry is None:
            entry, retry = self.model.objects.get_or_create(**key, defaults=defaults or {})
        if retry:
            self.queue(job, node_id, entry)
        return entry

    def lost(self, entry: PositionCache) -> bool:
        """Pending for longer than the broker takes to hand a lost message to another worker."""
        return entry.status == self.model.Status.PENDING and entry.pending_for_s() > self.limit.lost_after_s

    def queue(self, job, node_id: int, entry: PositionCache) -> None:
        """Send the task for ``entry``. When the broker cannot take it the row is withdrawn (a new one
        deleted, a retried one put back as it was), so nothing stays pending without a task."""
        fresh = entry.status == self.model.Status.PENDING and not self.lost(entry)
        before = {"status": entry.status, "error": entry.error, "created_at": entry.created_at}
        self.model.objects.filter(pk=entry.pk).update(status=self.model.Status.PENDING, error="",
                                                      created_at=timezone.now(), **self.reset)
        entry.status = self.model.Status.PENDING
        try:
            dispatch.send_task(self.task, [str(job.id), node_id, entry.pk], queue=job.network.queue)
        except BrokerUnavailable as exc:
            if fresh:
                self.model.objects.filter(pk=entry.pk, status=self.model.Status.PENDING).delete()
            else:
                self.model.objects.filter(pk=entry.pk).update(**before)
            raise Refused.broker_down(exc, self.what) from None


def pending(poll: str | None = None, **progress) -> JsonResponse:
    """202: a worker computes it; ask again (``poll``) after Retry-After."""
    body = {"status": "pending", **({"poll": poll} if poll is not None else {}), **progress}
    response = JsonResponse(body, status=202)
    response["Retry-After"] = "1"
    return response


def failed(message: str, **more) -> Refused:
    """503 for a computation the worker could not finish; ``?retry=1`` queues it again."""
    return Refused(message, status=503, retry_after=5, retry=RETRY, **more)
