"""Websocket consumer: one channel-layer group per job.

On connect the consumer joins the group *before* reading the database, then
sends a snapshot of everything stored; pushed messages that raced with the
snapshot arrive after it and are merged by node id on the page, so a late
joiner or a reconnecting page misses nothing.

Without Redis there are no live updates: a page that connects then still gets
the snapshot, is told, and is closed with 1013 (its websocket extension
reconnects with back-off); pages already connected are told the same way
(webapp.analyses.liveness).
"""

from __future__ import annotations

import json
import logging
import math
import uuid

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.utils import await_many_dispatch
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncJsonWebsocketConsumer, AsyncWebsocketConsumer

from webapp.analyses import liveness
from webapp.analyses.models import AnalysisJob, job_group_name
from webapp.analyses.results import job_snapshot

CLOSE_NO_SUCH_JOB = 4404
CLOSE_BAD_MESSAGE = 4400
CLOSE_TOO_BIG = 4413  # too large (as HTTP 413); servers may not send RFC 6455's 1009 for an application
# The page only listens; clients send nothing but small pings. Larger messages are refused
# unread here, and the server is told to refuse anything over MAX_WIRE_BYTES before buffering
# it (``serve`` passes it to uvicorn's --ws-max-size; UTF-8 takes up to 4 bytes a
# character, so every message this limit lets through fits).
MAX_MESSAGE_CHARS = 1024
MAX_WIRE_BYTES = 4 * MAX_MESSAGE_CHARS
# A ping's "t" comes back as it is: a number, or a short string.
MAX_PING_TOKEN_CHARS = 64
LIVE_LOST = {"kind": "live", "state": "lost",
             "message": "Live updates are paused (the message queue is unavailable); reconnecting."}

log = logging.getLogger(__name__)


@database_sync_to_async
def _load_snapshot(job_id: str) -> dict | None:
    job = AnalysisJob.objects.select_related("network").filter(pk=job_id).first()
    return None if job is None else job_snapshot(job)


@database_sync_to_async
def _job_exists(job_id: str) -> bool:
    return AnalysisJob.objects.filter(pk=job_id).exists()


def _echoable(token) -> bool:
    """A ping token the pong may carry back: None, a finite number or a short string."""
    if isinstance(token, bool):
        return False
    if isinstance(token, (int, float)):
        return math.isfinite(token)
    return token is None or (isinstance(token, str) and len(token) <= MAX_PING_TOKEN_CHARS)


class JobConsumer(AsyncJsonWebsocketConsumer):
    group: str | None = None

    async def __call__(self, scope, receive, send):
        """Channels asks the layer for a channel name before ``connect``; with Redis down that
        raised, and daphne answered the handshake with a 500. Serve the stored state instead."""
        try:
            await super().__call__(scope, receive, send)
        except Exception as exc:
            if "channel_name" in self.__dict__:
                raise  # not the layer's set-up: a real error
            log.warning("no channel layer for a websocket (%s: %s); serving the stored state only",
                        type(exc).__name__, exc)
            self.channel_layer, self.base_send = None, send
            try:
                await await_many_dispatch([receive], self.dispatch)
            except StopConsumer:
                pass

    async def connect(self):
        raw = self.scope["url_route"]["kwargs"]["job_id"]
        try:
            job_id = str(uuid.UUID(raw))
        except ValueError:
            job_id = None
        if job_id is None or not await _job_exists(job_id):
            # Accepted first: a close before the handshake is an HTTP 403, and the page would
            # never see the code that says the job does not exist.
            await self.accept()
            await self.close(code=CLOSE_NO_SUCH_JOB, reason="no such analysis")
            return
        group = job_group_name(job_id)
        try:
            if self.channel_layer is not None:
                await self.channel_layer.group_add(group, self.channel_name)
                self.group = group
        except Exception as exc:  # Redis is down: the stored state only, then "try again later"
            log.warning("joining %s failed (%s)", group, exc)
        await self.accept()
        snapshot = await _load_snapshot(job_id)
        await self.send_json({"kind": "snapshot", **(snapshot or {})})
        if self.group is None:
            await self.broker_lost()
        else:
            liveness.watch(self)

    async def broker_lost(self) -> None:
        await self.send_json(LIVE_LOST)
        await self.close(code=liveness.CLOSE_TRY_AGAIN_LATER)

    async def disconnect(self, code):
        liveness.unwatch(self)
        if self.group:
            try:
                await self.channel_layer.group_discard(self.group, self.channel_name)
            except Exception:  # Redis is down; its subscription went with it
                log.warning("leaving %s failed", self.group, exc_info=True)

    async def receive(self, text_data=None, bytes_data=None, **kwargs):
        """Junk (binary, oversized, not JSON, nested too deep) closes the socket with a reason,
        never a server error: 4413 for size, 4400 for the rest, after an "error" message."""
        if text_data is None:
            await self._refuse(CLOSE_BAD_MESSAGE, "binary frames are not accepted; send JSON text")
        elif len(text_data) > MAX_MESSAGE_CHARS:
            await self._refuse(CLOSE_TOO_BIG, f"messages are limited to {MAX_MESSAGE_CHARS} characters")
        else:
            try:
                content = json.loads(text_data)
            except (ValueError, RecursionError):
                await self._refuse(CLOSE_BAD_MESSAGE, "the message is not JSON")
                return
            await self.receive_json(content)

    async def receive_json(self, content, **kwargs):
        # The page only listens; a "ping" lets clients measure round trips.
        if not (isinstance(content, dict) and content.get("kind") == "ping"):
            await self.send_json({"kind": "error", "error": 'the only message accepted is {"kind": "ping", "t": ...}'})
            return
        token = content.get("t")
        if not _echoable(token):
            await self.send_json({"kind": "error", "error": f'a ping\'s "t" must be a number or a string of '
                                                            f'at most {MAX_PING_TOKEN_CHARS} characters'})
            return
        await self.send_json({"kind": "pong", "t": token})

    async def _refuse(self, code: int, reason: str) -> None:
        await self.send_json({"kind": "error", "error": reason})
        await self.close(code=code, reason=reason)

    async def dispatch(self, message):
        """Pushed job messages skip Channels' per-message ``aclose_old_connections()``: it is a
        thread hop per message per viewer (measured: 45% of the web process's time at 50 viewers),
        and these handlers never touch the database."""
        handler = getattr(self, get_handler_name(message), None) if message["type"].startswith("job.") else None
        if handler is None:
            return await super().dispatch(message)
        await handler(message)

    # Channel-layer messages {"type": "job.<kind>", "text": <JSON>} (see publish.encode):
    # the text goes out as it is, so a message is serialised once, not once per viewer.
    async def job_ply(self, event):
        await self.send(text_data=event["text"])

    job_plies = job_judgements = job_progress = job_status = job_ply


class NoRouteConsumer(AsyncWebsocketConsumer):
    """Any other websocket path: refuse the handshake (URLRouter alone raises, and daphne answers 500)."""

    async def connect(self):
        await self.close()
