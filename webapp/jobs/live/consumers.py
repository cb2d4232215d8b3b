"""Websocket consumer: one channel-layer group per job.

On connect the consumer joins the group *before* reading the database, then
sends a snapshot of everything stored; pushed messages that raced with the
snapshot arrive after it and are merged by node id on the page, so a late
joiner or a reconnecting page misses nothing.

Without Redis there are no live updates: a page that connects then still gets
the snapshot, is told, and is closed with 1013 (its websocket extension
reconnects with back-off); pages already connected are told the same way
(webapp.jobs.live.liveness).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import uuid

from channels.db import database_sync_to_async
from channels.utils import await_many_dispatch
from channels.exceptions import StopConsumer
from channels.layers import get_channel_layer
from channels.generic.websocket import AsyncJsonWebsocketConsumer, AsyncWebsocketConsumer
from django.conf import settings

from webapp.jobs.live import liveness
from webapp.jobs.live.messages import Error, Live, Pong, Snapshot
from webapp.jobs.models import AnalysisJob, job_group_name

CLOSE_NO_SUCH_JOB = 4404
CLOSE_BAD_MESSAGE = 4400
CLOSE_TOO_BIG = 4413  # too large (as HTTP 413); servers may not send RFC 6455's 1009 for an application
# The page only listens; clients send nothing but small pings. Larger messages are refused
# unread here, and the server is told to refuse anything over MAX_WIRE_BYTES before buffering
# it (``serve`` passes it to uvicorn's --ws-max-size; UTF-8 takes up to 4 bytes a
# character, so every message this limit lets through fits).
MAX_WIRE_BYTES = settings.SIGHTLINE_WS_MAX_WIRE_BYTES
MAX_MESSAGE_CHARS = MAX_WIRE_BYTES // 4
# A ping's "t" comes back as it is: a number, or a short string.
MAX_PING_TOKEN_CHARS = 64
LIVE_LOST = Live(state="lost", message="Live updates are paused (the message queue is unavailable); reconnecting.")

log = logging.getLogger(__name__)


@database_sync_to_async
def _load_snapshot(job_id: str) -> Snapshot | None:
    job = AnalysisJob.objects.select_related("network").filter(pk=job_id).first()
    return None if job is None else Snapshot.of(job)


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
        """Channels' ``AsyncConsumer.__call__``, with the channel layer read by a task of its own.

        Channels merges the client's events and the layer's messages with
        ``await_many_dispatch``: a new task and an ``asyncio.wait`` per message per viewer,
        then ``dispatch`` and the consumer's ``send`` wrappers. Pushed job messages need none of
        that; one forwarding task per viewer (``_forward``) takes them off the layer in order
        and writes their text to the socket, started once the snapshot is out.

        Channels asks the layer for a channel name before ``connect``; with Redis down that
        raised, and the server answered the handshake with a 500. Serve the stored state then.
        """
        self.scope = scope
        self.base_send = send
        self.channel_layer = get_channel_layer(self.channel_layer_alias)
        self._forwarder = None
        if self.channel_layer is not None:
            try:
                self.channel_name = await self.channel_layer.new_channel()
            except Exception as exc:
                log.warning("no channel layer for a websocket (%s: %s); serving the stored state only",
                            type(exc).__name__, exc)
                self.channel_layer = None
        try:
            await await_many_dispatch([receive], self.dispatch)
        except StopConsumer:
            pass
        finally:
            task = self._forwarder
            if task is None and self.channel_layer is not None:
                # As Channels does: a cancelled receive is what releases the layer's channel (the
                # pub/sub layer unsubscribes it then). Started, it waits in the layer's queue.
                task = asyncio.ensure_future(self.channel_layer.receive(self.channel_name))
                await asyncio.sleep(0)
            if task is not None:
                task.cancel()
                try:
                    await task
                except asyncio.CancelledError:
                    pass

    async def _forward(self) -> None:
        """Pushed messages, one at a time and in the order the layer delivers them."""
        receive, name, send = self.channel_layer.receive, self.channel_name, self.base_send
        while True:
            message = await receive(name)
            try:
                if message.get("type", "").startswith("job.") and "text" in message:
                    await send({"type": "websocket.send", "text": message["text"]})
                else:
                    await self.dispatch(message)
            except OSError as exc:  # uvicorn's ClientDisconnected: the socket is closing, the main loop ends it
                log.debug("forwarding to %s stopped: %s: %s", name, type(exc).__name__, exc)
                return
            except Exception:
                log.exception("forwarding to %s failed; the viewer gets no more live messages", name)
                return

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
        await self.send_json(snapshot.wire() if snapshot else {"kind": Snapshot.kind})
        if self.group is None:
            await self.broker_lost()
        else:
            # Messages that raced with the snapshot wait in the layer's queue and follow it.
            self._forwarder = asyncio.get_running_loop().create_task(self._forward())
            liveness.watch(self)

    async def broker_lost(self) -> None:
        await self.send_json(LIVE_LOST.wire())
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
            await self.send_json(Error('the only message accepted is {"kind": "ping", "t": ...}').wire())
            return
        token = content.get("t")
        if not _echoable(token):
            await self.send_json(Error(f'a ping\'s "t" must be a number or a string of '
                                       f'at most {MAX_PING_TOKEN_CHARS} characters').wire())
            return
        await self.send_json(Pong(token).wire())

    async def _refuse(self, code: int, reason: str) -> None:
        await self.send_json(Error(reason).wire())
        await self.close(code=code, reason=reason)

    # Channel-layer messages {"type": "job.<kind>", "text": <JSON>} (see publish.encode) are
    # written by ``_forward`` as they are: a message is serialised once, not once per viewer.


class NoRouteConsumer(AsyncWebsocketConsumer):
    """Any other websocket path: refuse the handshake (URLRouter alone raises, and daphne answers 500)."""

    async def connect(self):
        await self.close()
