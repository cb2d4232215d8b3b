"""A study through a real Celery worker (celery.contrib.testing) on the embedded Redis: submitted by
the API, sent by the real dispatch to the studies' queue, run by the worker consuming that queue,
its progress published on the Redis channel layer as the page's socket would get it."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from asgiref.sync import async_to_sync
from celery import Celery
from celery.contrib.testing.worker import start_worker
from channels.layers import channel_layers, get_channel_layer
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token

from tests.conftest import require_stockfish
from tests.web.test_studies import CSV
from webapp.site.embedded_redis import EmbeddedRedis
from webapp.site.redis_urls import RedisUrls
from webapp.studies.models import Study, study_group_name

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def studies_worker(tmp_path, settings):
    from workers.celery_app import app as site_app

    server = EmbeddedRedis(tmp_path / "redis" / "redis.sock").start()
    urls = RedisUrls.for_socket(server.socket_path)
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
                                           "CONFIG": {"hosts": [{"address": urls.channels, "socket_timeout": 30}]}}}
    channel_layers.backends = {}
    app = Celery("sightline-studies-test", set_as_current=True)
    app.config_from_object("django.conf:settings", namespace="CELERY")
    app.conf.update(broker_url=urls.celery_broker, result_backend=urls.celery_backend)
    app.autodiscover_tasks(force=True)
    app.finalize()
    try:
        with start_worker(app, pool="solo", concurrency=1, queues=[settings.SIGHTLINE_STUDIES_QUEUE],
                          perform_ping_check=False, shutdown_timeout=20):
            yield app
    finally:
        site_app.set_current()
        channel_layers.backends = {}
        server.stop()


def test_a_study_runs_in_the_studies_worker_and_publishes_its_progress(client, tiny_network, studies_worker):
    require_stockfish()
    token = Token.objects.create(user=User.objects.create_user("worker-test", password="pw")).key
    layer = get_channel_layer()

    async def listen() -> list[dict]:
        channel = await layer.new_channel()
        from channels.db import database_sync_to_async

        def submit():
            answer = client.post("/api/studies/", json.dumps({
                "network": tiny_network.name, "method": "forgotten", "positions": {"kind": "csv", "text": CSV},
                "settings": {"nodes": 1000}}), content_type="application/json", HTTP_AUTHORIZATION=f"Token {token}")
            assert answer.status_code == 201, answer.content
            return answer.json()["id"]

        # The id is known once submitted: the group is joined then, so the first messages may be missed
        # (as a page that connects late; the stored state is the truth, read each round).
        study_id = await database_sync_to_async(submit)()
        await layer.group_add(study_group_name(study_id), channel)
        received, deadline = [], time.monotonic() + 180
        while time.monotonic() < deadline:
            study = await database_sync_to_async(Study.objects.get)(pk=study_id)
            if study.finished:
                break
            try:
                message = await asyncio.wait_for(layer.receive(channel), timeout=2)
            except asyncio.TimeoutError:
                continue
            received.append(json.loads(message["text"]))
        return received

    messages = async_to_sync(listen)()
    study = Study.objects.get()
    assert study.status == "done", study.error
    assert (study.done, study.total) == (3, 3) and study.items.count() == 3
    assert messages and all(m["kind"] == "progress" for m in messages)
    assert [m["done"] for m in messages] == sorted(m["done"] for m in messages)
