"""The study page's websocket: joins the study's group, sends the stored state at once (so nothing
published before the connection is missed), then forwards every progress message."""

from __future__ import annotations

import json

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.core.exceptions import ValidationError

from webapp.studies.live import state
from webapp.studies.models import Study, study_group_name

CLOSE_NO_SUCH_STUDY = 4404


@database_sync_to_async
def _state(study_id: str) -> dict | None:
    try:
        study = Study.objects.filter(pk=study_id).first()
    except ValidationError:  # not a UUID
        return None
    return None if study is None else state(study)


class StudyConsumer(AsyncWebsocketConsumer):
    group: str | None = None

    async def connect(self):
        study_id = self.scope["url_route"]["kwargs"]["study_id"]
        await self.accept()
        snapshot = await _state(study_id)
        if snapshot is None:
            await self.close(code=CLOSE_NO_SUCH_STUDY)
            return
        self.group = study_group_name(study_id)
        if self.channel_layer is not None:
            await self.channel_layer.group_add(self.group, self.channel_name)
            snapshot = await _state(study_id) or snapshot  # joined first: nothing falls between the two
        await self.send(text_data=json.dumps(snapshot))

    async def disconnect(self, code):
        if self.group and self.channel_layer is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data=None, bytes_data=None):
        """The page only listens."""

    async def study_message(self, event):
        await self.send(text_data=event["text"])
