"""The request side of an on-demand computation: find its row, queue it when new, retried or
lost (on the on-demand lane, ``SIGHTLINE_ONDEMAND_QUEUE``), within the asker's and the site's fair
use (``webapp.ondemand.limits``), and answer a pending one. The feature's view checks the request
first and shapes the ready answer; everything between is here, once."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Callable

from django.conf import settings
from django.db.models import Q
from django.http import HttpRequest, JsonResponse
from django.utils import timezone

from webapp.ondemand.clients import client_key
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

    def serve(self, request: HttpRequest, job, node_id: int, key: dict, *, units: float = 1,
              defaults: dict | None = None, check_new: Callable[[], Refused | None] | None = None) -> PositionCache:
        """The row for ``key``, queued first when it is new, failed and retried (``?retry=1``), or
        lost with its worker; ``check_new`` may refuse new work before the limits are counted, and
        new work costs ``units`` (``PendingLimit.cost``) of the asker's and the site's limits.
        Raises ``Refused`` (429 over a limit, 503 when the queue is down)."""
        entry = self.model.objects.filter(**key).first()
        asked = request.GET.get("retry") == "1"
        lost = entry is not None and self.lost(entry) and (asked or not self.lost_waits_for_retry)
        retry = lost or entry is not None and asked and entry.status == self.model.Status.FAILED
        if entry is not None and not retry:
            return entry
        client, cost = client_key(request), self.limit.cost(units)
        refusal = check_new() if check_new else None
        if refusal is None and entry is not None:
            refusal = self.limit.refusal(self.pending_rows().exclude(pk=entry.pk), client, cost)
        if refusal is not None:
            raise refusal
        if entry is None:
            entry, retry = self.model.objects.get_or_create(**key, defaults={**(defaults or {}), "client": client,
                                                                             "cost": cost})
            if retry:
                self._admit(entry, client, cost)
        if retry:
            self.queue(job, node_id, entry, client, cost)
        return entry

    def _admit(self, entry: PositionCache, client: str, cost: float) -> None:
        """A new row stays only when the rows queued before it leave room: counted after it is written,
        so requests racing each other cannot all pass a limit that has room for one of them."""
        refusal = self.limit.refusal(self.pending_rows().filter(pk__lt=entry.pk), client, cost)
        if refusal is not None:
            self.model.objects.filter(pk=entry.pk, status=self.model.Status.PENDING, lease_owner="").delete()
            raise refusal

    def lost_rows(self) -> Q:
        """Pending rows whose worker is gone: its lease ran out, or no worker claimed the row for
        longer than the broker takes to hand a lost message to another."""
        now = timezone.now()
        return Q(status=self.model.Status.PENDING) & (
            (~Q(lease_owner="") & Q(lease_until__lt=now))
            | Q(lease_owner="", created_at__lt=now - timedelta(seconds=self.limit.lost_after_s)))

    def pending_rows(self):
        """The rows that count against the limits: pending, with a live worker or a message on its way."""
        return self.model.objects.filter(status=self.model.Status.PENDING).exclude(self.lost_rows())

    def lost(self, entry: PositionCache) -> bool:
        return self.model.objects.filter(self.lost_rows(), pk=entry.pk).exists()

    def queue(self, job, node_id: int, entry: PositionCache, client: str, cost: float) -> None:
        """Send the task for ``entry`` on the on-demand lane, unclaimed, counted for ``client``. When the
        broker cannot take it the row is withdrawn (a new one deleted, a retried one put back as it was),
        so nothing stays pending without a task."""
        fresh = entry.status == self.model.Status.PENDING and not self.lost(entry)
        kept = ("status", "error", "created_at", "client", "cost", "lease_owner", "lease_until")
        before = {name: getattr(entry, name) for name in kept}
        self.model.objects.filter(pk=entry.pk).update(status=self.model.Status.PENDING, error="",
                                                      created_at=timezone.now(), client=client, cost=cost,
                                                      lease_owner="", lease_until=None, **self.reset)
        entry.status = self.model.Status.PENDING
        try:
            dispatch.send_task(self.task, [str(job.id), node_id, entry.pk], queue=settings.SIGHTLINE_ONDEMAND_QUEUE)
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
