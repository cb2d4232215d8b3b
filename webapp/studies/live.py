"""A study's progress over the channel layer: the worker publishes, the study's page listens.

The jobs app's live pattern, small: one group per study (``study_group_name``); every message is
also in the database first, so a page that connects late gets the state from the snapshot the
consumer sends on connect, and a lost message costs nothing (the page's poll fills the gap).
Delivery goes through asgiref's ``async_to_sync`` (a study publishes at most one message per
position, so the connection per message that the jobs' publishing loop avoids costs little here).
"""

from __future__ import annotations

import json
import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from webapp.studies.models import Study, study_group_name

log = logging.getLogger(__name__)


def state(study: Study) -> dict:
    """The progress message: where the run stands (also the snapshot and the poll's answer)."""
    return {"kind": "progress", "status": study.status, "done": study.done, "total": study.total,
            "error": study.error}


def encode(payload: dict) -> dict:
    return {"type": "study.message", "text": json.dumps(payload, separators=(",", ":"))}


def publish(study: Study) -> None:
    """Send ``study``'s state to its page(s); never raises."""
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(study_group_name(study.pk), encode(state(study)))
    except Exception as exc:  # a lost message is caught up by the page's poll
        log.warning("publishing study %s failed: %s: %s", study.pk, type(exc).__name__, exc)
