"""A worker's lease on a row: the work runs at most once at a time, and a dead worker's work is
known lost within one lease.

The broker may deliver a task more than once (a redelivery after its visibility timeout, a message
sent again for a lost row); only the delivery that claims the lease computes. The holder renews it
every third of its length from a thread (``Heartbeat``); a lease that runs out means its worker is
gone. Every change is one conditional UPDATE, so two workers never both win. The jobs' lease
(``webapp.jobs.run.lease``) keeps its own claim (a job's counters restart) and shares the heartbeat.
"""

from __future__ import annotations

import logging
import threading
import uuid
from datetime import timedelta
from typing import Callable

from django.conf import settings
from django.db import close_old_connections
from django.db.models import Q
from django.utils import timezone

log = logging.getLogger(__name__)


def lease_seconds() -> float:
    """The on-demand lease (``SIGHTLINE_ONDEMAND_LEASE_S``)."""
    return settings.SIGHTLINE_ONDEMAND_LEASE_S


def new_owner() -> str:
    return uuid.uuid4().hex


def until():
    return timezone.now() + timedelta(seconds=lease_seconds())


def free() -> Q:
    """Rows nobody holds a live lease on."""
    return Q(lease_owner="") | Q(lease_until__isnull=True) | Q(lease_until__lt=timezone.now())


def claim(rows, owner: str) -> bool:
    """Take the lease on the one row of ``rows`` (a queryset filtered to it and to the states that
    may be worked on) when nobody holds a live one."""
    return bool(rows.filter(free()).update(lease_owner=owner, lease_until=until()))


def renew(rows, owner: str) -> bool:
    """False when the lease is no longer ours: the holder must not write its answer."""
    return bool(rows.filter(lease_owner=owner).update(lease_until=until()))


class Heartbeat:
    """Calls ``renew()`` every ``interval_s`` from a daemon thread while the work runs; when it
    answers False the lease is lost, ``lost`` is set and the heartbeat stops."""

    def __init__(self, renew: Callable[[], bool], interval_s: float, name: str, also: Callable[[], None] | None = None):
        """``also``: called after each successful renewal (a job's position claims)."""
        self.renew, self.interval_s, self.name, self.also = renew, interval_s, name, also
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def __enter__(self) -> "Heartbeat":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.interval_s):
                try:
                    renewed = self.renew()
                except Exception:  # a database hiccup: try again; the lease has two more intervals
                    log.exception("%s: renewing the lease failed", self.name)
                    continue
                if not renewed:
                    log.warning("%s: lease lost (cancelled, or taken over after it ran out)", self.name)
                    self.lost.set()
                    return
                if self.also is not None:
                    self.also()
        finally:
            close_old_connections()
