"""Renews a running job's lease from a background thread (see webapp.jobs.run.lease).

The job's own thread may spend seconds in one search, so the renewal cannot
wait for it. When a renewal fails the lease is lost: ``lost`` is set, and the
job stops at its next check instead of running beside its new holder.
"""

from __future__ import annotations

import logging
import threading

from django.db import close_old_connections

from webapp.jobs.run import lease

log = logging.getLogger(__name__)


class Heartbeat:
    def __init__(self, job_id, owner: str, also=None):
        """``also``: called after each successful renewal (the job's position claims)."""
        self.job_id, self.owner, self.also = job_id, owner, also
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"lease-{job_id}", daemon=True)

    def __enter__(self) -> "Heartbeat":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        interval = lease.lease_seconds() / 3.0
        try:
            while not self._stop.wait(interval):
                try:
                    renewed = lease.renew(self.job_id, self.owner)
                except Exception:  # a database hiccup: try again; the lease has two more intervals
                    log.exception("renewing the lease of job %s failed", self.job_id)
                    continue
                if not renewed:
                    log.warning("job %s: lease lost (cancelled, or taken over after it ran out)", self.job_id)
                    self.lost.set()
                    return
                if self.also is not None:
                    self.also()
        finally:
            close_old_connections()
