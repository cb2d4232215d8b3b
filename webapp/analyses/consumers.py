"""Websocket consumer: one channel-layer group per job.

On connect the consumer joins the group *before* reading the database, then
sends a snapshot of everything stored; pushed messages that raced with the
snapshot arrive after it and are merged by node id on the page, so a late
joiner or a reconnecting page misses nothing.
"""

from __future__ import annotations

import uuid

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer, AsyncWebsocketConsumer

from webapp.analyses.models import AnalysisJob, job_group_name
from webapp.analyses.results import job_snapshot

CLOSE_NO_SUCH_JOB = 4404


@database_sync_to_async
def _load_snapshot(job_id: str) -> dict | None:
    job = AnalysisJob.objects.select_related("network").filter(pk=job_id).first()
    return None if job is None else job_snapshot(job)


@database_sync_to_async
def _job_exists(job_id: str) -> bool:
    return AnalysisJob.objects.filter(pk=job_id).exists()


class JobConsumer(AsyncJsonWebsocketConsumer):
    group: str | None = None

    async def connect(self):
        raw = self.scope["url_route"]["kwargs"]["job_id"]
        try:
            job_id = str(uuid.UUID(raw))
        except ValueError:
            await self.close(code=CLOSE_NO_SUCH_JOB)
            return
        if not await _job_exists(job_id):
            await self.close(code=CLOSE_NO_SUCH_JOB)
            return
        self.group = job_group_name(job_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        snapshot = await _load_snapshot(job_id)
        await self.send_json({"kind": "snapshot", **(snapshot or {})})

    async def disconnect(self, code):
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content, **kwargs):
        # The page only listens; a "ping" lets clients measure round trips.
        if isinstance(content, dict) and content.get("kind") == "ping":
            await self.send_json({"kind": "pong", "t": content.get("t")})

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

    job_plies = job_progress = job_status = job_ply


class NoRouteConsumer(AsyncWebsocketConsumer):
    """Any other websocket path: refuse the handshake (URLRouter alone raises, and daphne answers 500)."""

    async def connect(self):
        await self.close()
