"""Cold shutdown for the pools that run jobs in this process (threads, solo).

Celery's cold shutdown (SIGQUIT, which ``serve`` sends after a short warm
wait) cancels running tasks through ``pool.terminate_job``, which the threads
and solo pools do not implement: they logged ``NotImplementedError ...
kill_job`` and the job ran on. A thread cannot be killed, so these pools ask
instead: ``requested`` is set, and a running job (webapp.jobs.run.runner) stops at
its next check and hands its lease back, so the next worker resumes it from
the cache at once.
"""

from __future__ import annotations

import threading

from celery.concurrency.solo import TaskPool as SoloPool
from celery.concurrency.thread import TaskPool as ThreadPool

requested = threading.Event()


class _AsksJobsToStop:
    def terminate_job(self, pid, signal=None) -> None:
        requested.set()


class CooperativeThreadPool(_AsksJobsToStop, ThreadPool):
    """``--pool threads``."""


class CooperativeSoloPool(_AsksJobsToStop, SoloPool):
    """``--pool solo``."""
