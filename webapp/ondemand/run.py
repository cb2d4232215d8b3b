"""The worker side of an on-demand computation: one body for every feature's task.

The delivery that claims the row's lease (``webapp.ondemand.lease``) computes it, renewing the lease
while it works; any other delivery of the same row (the broker's redelivery of a lost message, a
message sent again for a row that looked lost) finds it claimed or done and leaves it, so a row
is never computed twice at once nor again once done. The answer is written only while the lease
is still ours.
"""

from __future__ import annotations

import logging
from typing import Callable

from webapp.ondemand import lease
from webapp.ondemand.models import PositionCache

log = logging.getLogger(__name__)

CLAIMED = "claimed"  # another worker holds the row's live lease


class ComputationFailed(Exception):
    """A failure the feature words itself: ``error`` for the row, ``data`` kept beside it."""

    def __init__(self, error: str, **data):
        super().__init__(error)
        self.error = error
        self.data = data


def run(model: type[PositionCache], entry_id: int, compute: Callable[[PositionCache], dict]) -> str:
    """Fill a pending row: ``compute(entry)`` gives the answer's fields, stored with READY; a failure
    is stored with FAILED and its words. A row that is gone, no longer pending (done, or withdrawn)
    or claimed by a live worker is left alone; the status is returned ("claimed" for the last)."""
    owner = lease.new_owner()
    held = model.objects.filter(pk=entry_id, status=model.Status.PENDING)
    if not lease.claim(held, owner):
        entry = model.objects.filter(pk=entry_id).first()
        if entry is None:
            return "missing"
        return CLAIMED if entry.status == model.Status.PENDING else entry.status
    entry = model.objects.get(pk=entry_id)
    with lease.Heartbeat(lambda: lease.renew(held, owner), lease.lease_seconds() / 3.0,
                         f"{model.__name__}-{entry_id}"):
        try:
            fields = compute(entry)
        except ComputationFailed as exc:
            return _write(held, owner, model.Status.FAILED, exc.error, **({"data": exc.data} if exc.data else {}))
        except Exception as exc:
            log.exception("%s %s failed", model.__name__, entry_id)
            return _write(held, owner, model.Status.FAILED, f"{type(exc).__name__}: {exc}")
    return _write(held, owner, model.Status.READY, "", **fields)


def _write(held, owner: str, status: str, error: str, **fields) -> str:
    """Store the outcome while the lease is ours; otherwise (it ran out and the row was queued again)
    the new holder's answer counts and this one is dropped."""
    if not held.filter(lease_owner=owner).update(status=status, error=error, lease_owner="", lease_until=None, **fields):
        log.warning("%s: the lease was lost before the answer was stored; dropped", held.model.__name__)
        return CLAIMED
    return status
