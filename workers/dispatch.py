"""The one way the site hands work to the workers: a task, by name, on a queue.

Every sender (analysis jobs, deeper searches, attention maps, head atlases, network
checks) calls ``send_task``; when the broker cannot take the message it raises
``BrokerUnavailable``, and the caller withdraws what it wrote for the task and answers
503 with ``Retry-After``. Tasks are named strings ("sightline.run_analysis"), so the site
never imports the code that runs them.
"""

from __future__ import annotations

import logging

from celery import current_app
from kombu.exceptions import OperationalError

log = logging.getLogger(__name__)

# What a 503 caused by the broker tells the client to wait before trying again (seconds).
RETRY_AFTER_S = 30


class BrokerUnavailable(RuntimeError):
    """The broker (Redis) could not take the task: nothing was queued."""

    retry_after_s = RETRY_AFTER_S

    def message(self, what: str) -> str:
        """One sentence for the page or the API: ``what`` could not start, try again later."""
        return (f"The workers' queue cannot be reached right now, so {what} was not started. "
                f"Please try again in a minute.")


def send_task(name: str, args: list, queue: str, task_id: str | None = None) -> None:
    """Queue the task ``name`` with ``args`` on ``queue``; ``BrokerUnavailable`` when it cannot.

    Publishing retries briefly (``CELERY_TASK_PUBLISH_RETRY_POLICY``) before giving up, so a
    refused submission answers within about a second. The current app is used, not a fixed
    one, so a test (or a tool) may point the site at another broker."""
    try:
        # ignore_result: nothing reads task results; asking for one would first subscribe
        # to the result backend, which fails differently from the broker when Redis is down.
        current_app.send_task(name, args=args, queue=queue, task_id=task_id, ignore_result=True)
    except (OperationalError, OSError) as exc:  # kombu wraps redis-py's connection errors
        log.warning("the broker refused %s on %s (%s)", name, queue, exc)
        raise BrokerUnavailable(f"{type(exc).__name__}: {exc}") from exc
