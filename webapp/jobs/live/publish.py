"""Small messages to a job's channel-layer group (workers and views send them; their kinds
are the dataclasses of ``webapp.jobs.live.messages``).

Delivery is at-most-once and capped at 1 MB per message, so only per-node
deltas go out; everything is in the database first, and pages catch up from
there on (re)connect.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer

from webapp.jobs.live.messages import Status
from webapp.jobs.models import AnalysisJob, job_group_name

log = logging.getLogger(__name__)


def encode(kind: str, payload: dict) -> dict:
    """The channel-layer message: the websocket text is serialised once here, not once per viewer."""
    body = {"kind": kind, "sent_at_ms": round(time.time() * 1000.0, 1), **payload}
    return {"type": f"job.{kind}", "text": json.dumps(body, separators=(",", ":"))}


class _PublishLoop:
    """One event loop per process, in a daemon thread, for publishing from sync code.

    ``async_to_sync`` outside an async context starts a new event loop per call,
    and the Redis layers open a connection per loop: a new connection per message,
    where a loop that stays up keeps one (bench/fanout.py measures publishing).
    """

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None
    _pid: int | None = None

    @classmethod
    def run(cls, coroutine, timeout: float = 10.0):
        with cls._lock:
            if cls._loop is None or cls._pid != os.getpid():  # also after a fork
                cls._loop = asyncio.new_event_loop()
                cls._pid = os.getpid()
                threading.Thread(target=cls._loop.run_forever, name="publish-loop", daemon=True).start()
            loop = cls._loop
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result(timeout)


class GroupPublisher:
    """Sends ``{"type": "job.<kind>", "text": <JSON>}`` to one job's group; never raises."""

    def __init__(self, job_id):
        self.group = job_group_name(job_id)
        self.layer = get_channel_layer()
        if self.layer is None:
            self._send = None
        elif isinstance(self.layer, InMemoryChannelLayer):
            # In-process (tests): its queues belong to the consumers' loop, which asgiref finds.
            self._send = async_to_sync(self.layer.group_send)
        else:
            self._send = lambda group, message: _PublishLoop.run(self.layer.group_send(group, message))

    def __call__(self, kind: str, payload: dict) -> None:
        if self._send is None:
            return
        try:
            self._send(self.group, encode(kind, payload))
        except Exception as exc:  # a lost message is caught up from the database on reconnect
            # One line, not a traceback: while Redis is down every message of a running job fails.
            log.warning("publishing %s to %s failed: %s: %s", kind, self.group, type(exc).__name__, exc)


class NullPublisher:
    """For synchronous runs (analyze_pgn): nobody is listening."""

    def __call__(self, kind: str, payload: dict) -> None:
        return None


def publish_status(job: AnalysisJob, publisher=None) -> None:
    Status.of(job).send(publisher or GroupPublisher(job.id))
