"""Renews a running job's lease from a background thread (see webapp.jobs.run.lease).

The job's own thread may spend seconds in one search, so the renewal cannot
wait for it. When a renewal fails the lease is lost: ``lost`` is set, and the
job stops at its next check instead of running beside its new holder. The
thread is the on-demand kit's (``webapp.ondemand.lease.Heartbeat``), one for both.
"""

from __future__ import annotations

from webapp.jobs.run import lease
from webapp.ondemand import lease as leases


class Heartbeat(leases.Heartbeat):
    def __init__(self, job_id, owner: str, also=None):
        """``also``: called after each successful renewal (the job's position claims)."""
        super().__init__(lambda: lease.renew(job_id, owner), lease.lease_seconds() / 3.0, f"lease-{job_id}", also)
        self.job_id, self.owner = job_id, owner
