"""The worker side of an on-demand computation: one body for every feature's task."""

from __future__ import annotations

import logging
from typing import Callable

from webapp.ondemand.models import PositionCache

log = logging.getLogger(__name__)


class ComputationFailed(Exception):
    """A failure the feature words itself: ``error`` for the row, ``data`` kept beside it."""

    def __init__(self, error: str, **data):
        super().__init__(error)
        self.error = error
        self.data = data


def run(model: type[PositionCache], entry_id: int, compute: Callable[[PositionCache], dict]) -> str:
    """Fill a pending row: ``compute(entry)`` gives the answer's fields, stored with READY; a failure
    is stored with FAILED and its words. A row that is gone or no longer pending is left alone
    (the task ran twice, or the row was withdrawn); the status is returned."""
    entry = model.objects.filter(pk=entry_id).first()
    if entry is None:
        return "missing"
    if entry.status != model.Status.PENDING:
        return entry.status
    try:
        fields = compute(entry)
    except ComputationFailed as exc:
        return _failed(model, entry, exc.error, **({"data": exc.data} if exc.data else {}))
    except Exception as exc:
        log.exception("%s %s failed", model.__name__, entry_id)
        return _failed(model, entry, f"{type(exc).__name__}: {exc}")
    model.objects.filter(pk=entry.pk).update(status=model.Status.READY, error="", **fields)
    return model.Status.READY


def _failed(model, entry, error: str, **fields) -> str:
    model.objects.filter(pk=entry.pk).update(status=model.Status.FAILED, error=error, **fields)
    return model.Status.FAILED
