"""Pushed messages through the real Redis pub/sub channel layer: every viewer of a job gets each
message exactly once and in the order it was published, after its snapshot; a viewer that goes
away leaves nothing subscribed behind. (Speed is measured by bench/live.py and bench/fanout.py.)"""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import async_to_sync
from channels.layers import channel_layers, get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from tests.web.conftest import SHORT_GAME
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.models import job_group_name
from webapp.jobs.live.publish import GroupPublisher, encode
from webapp.jobs.live.routing import websocket_urlpatterns
from webapp.site.embedded_redis import EmbeddedRedis

pytestmark = pytest.mark.django_db(transaction=True)

APP = URLRouter(websocket_urlpatterns)


@pytest.fixture
def redis_layer(settings, tmp_path):
    server = EmbeddedRedis(tmp_path / "redis.sock").start()
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
                                           "CONFIG": {"hosts": [{"address": server.url, "socket_timeout": 30}]}}}
    settings.SIGHTLINE_LIVE_CHECK_S = 60
    channel_layers.backends = {}
    try:
        yield server
    finally:
        channel_layers.backends = {}
        server.stop()


def _layer_state():
    layer = get_channel_layer()._get_layer()
    return set(layer.channels), {g: set(c) for g, c in layer.groups.items()}


async def _progress(viewer, count: int, timeout: float = 10) -> list[int]:
    got = []
    while len(got) < count:
        message = await viewer.receive_json_from(timeout=timeout)
        assert message["kind"] == "progress", message
        got.append(message["nodes"])
    return got


def test_every_viewer_gets_every_message_once_in_order(redis_layer, material_network):
    job = create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False)
    viewers_n, messages = 20, 300

    async def scenario():
        viewers = [WebsocketCommunicator(APP, f"/ws/jobs/{job.id}/") for _ in range(viewers_n)]
        for viewer in viewers:
            assert (await viewer.connect(timeout=20))[0]
            assert (await viewer.receive_json_from(timeout=10))["kind"] == "snapshot"
        layer = get_channel_layer()
        group = job_group_name(job.id)
        for i in range(messages):  # back to back, as fast as the layer takes them
            await layer.group_send(group, encode("progress", {"node": 0, "nodes": i, "nps": 1}))
        received = await asyncio.gather(*(_progress(v, messages) for v in viewers))
        assert all(got == list(range(messages)) for got in received)
        assert all([await v.receive_nothing(timeout=0.3) for v in viewers[:3]])  # nothing twice
        for viewer in viewers:
            await viewer.disconnect()

    async_to_sync(scenario)()


def test_messages_published_from_a_worker_thread_arrive_in_order(redis_layer, material_network):
    """GroupPublisher is what workers use: its own event loop in a thread, another Redis connection."""
    job = create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False)

    async def scenario():
        viewers = [WebsocketCommunicator(APP, f"/ws/jobs/{job.id}/") for _ in range(5)]
        for viewer in viewers:
            assert (await viewer.connect(timeout=20))[0]
            await viewer.receive_json_from(timeout=10)

        def publish():
            send = GroupPublisher(job.id)
            for i in range(100):
                send("progress", {"node": 1, "nodes": i, "nps": 1})

        await asyncio.to_thread(publish)
        received = await asyncio.gather(*(_progress(v, 100) for v in viewers))
        assert all(got == list(range(100)) for got in received)
        for viewer in viewers:
            await viewer.disconnect()

    async_to_sync(scenario)()


def test_messages_that_race_the_snapshot_follow_it(redis_layer, material_network, monkeypatch):
    """A message published while a joining viewer's snapshot is being read arrives after the snapshot."""
    from webapp.jobs.live import consumers

    job = create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False)
    group = job_group_name(job.id)
    real_load = consumers._load_snapshot

    async def slow_load(job_id):
        layer = get_channel_layer()
        for i in range(3):  # the viewer is in the group already: these are for it
            await layer.group_send(group, encode("progress", {"node": 0, "nodes": i, "nps": 1}))
        await asyncio.sleep(0.2)
        return await real_load(job_id)

    monkeypatch.setattr(consumers, "_load_snapshot", slow_load)

    async def scenario():
        viewer = WebsocketCommunicator(APP, f"/ws/jobs/{job.id}/")
        assert (await viewer.connect(timeout=20))[0]
        assert (await viewer.receive_json_from(timeout=10))["kind"] == "snapshot"
        assert await _progress(viewer, 3) == [0, 1, 2]
        await viewer.disconnect()

    async_to_sync(scenario)()


def test_a_viewer_that_leaves_releases_its_channel_and_group(redis_layer, material_network):
    job = create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False)

    async def scenario():
        before = _layer_state()
        stays, leaves = (WebsocketCommunicator(APP, f"/ws/jobs/{job.id}/") for _ in range(2))
        for viewer in (stays, leaves):
            assert (await viewer.connect(timeout=20))[0]
            await viewer.receive_json_from(timeout=10)
        await leaves.disconnect()
        await asyncio.sleep(0.1)
        channels, groups = _layer_state()
        assert len(channels - before[0]) == 1 and len(groups[f"asgi__group__{job_group_name(job.id)}"]) == 1
        # The one still there carries on.
        await get_channel_layer().group_send(job_group_name(job.id), encode("progress", {"node": 0, "nodes": 7}))
        assert await _progress(stays, 1) == [7]
        await stays.disconnect()
        # A socket for a job that does not exist is closed (4404) and keeps nothing either.
        missing = WebsocketCommunicator(APP, "/ws/jobs/00000000-0000-0000-0000-000000000000/")
        assert (await missing.connect(timeout=20))[0]
        assert (await missing.receive_output(timeout=10))["code"] == 4404
        await missing.wait(timeout=5)
        await asyncio.sleep(0.1)
        assert _layer_state() == before

    async_to_sync(scenario)()
