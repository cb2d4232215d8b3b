"""Small messages to a job's channel-layer group (workers and views send them).

Delivery is at-most-once and capped at 1 MB per message, so only per-node
deltas go out; everything is in the database first, and pages catch up from
there on (re)connect.
"""

from __future__ import annotations

import json
import logging
import time

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from webapp.analyses.models import AnalysisJob, job_group_name
from webapp.analyses.results import job_status_json

log = logging.getLogger(__name__)


def encode(kind: str, payload: dict) -> dict:
    """The channel-layer message: the websocket text is serialised once here, not once per viewer."""
    body = {"kind": kind, "sent_at_ms": round(time.time() * 1000.0, 1), **payload}
    return {"type": f"job.{kind}", "text": json.dumps(body, separators=(",", ":"))}


class GroupPublisher:
    """Sends ``{"type": "job.<kind>", "text": <JSON>}`` to one job's group; never raises."""

    def __init__(self, job_id):
        self.group = job_group_name(job_id)
        self.layer = get_channel_layer()
        self._send = async_to_sync(self.layer.group_send) if self.layer is not None else None

    def __call__(self, kind: str, payload: dict) -> None:
        if self._send is None:
            return
        try:
            self._send(self.group, encode(kind, payload))
        except Exception:  # a lost message is caught up from the database on reconnect
            log.exception("publishing %s to %s failed", kind, self.group)


class NullPublisher:
    """For synchronous runs (analyze_pgn): nobody is listening."""

    def __call__(self, kind: str, payload: dict) -> None:
        return None


def publish_status(job: AnalysisJob, publisher=None) -> None:
    (publisher or GroupPublisher(job.id))("status", job_status_json(job))
