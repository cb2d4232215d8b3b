"""Redis down: a submission gets a 503 and leaves nothing behind; websocket viewers are told and
closed with 1013 (their page reconnects with back-off and catches up from the snapshot)."""

from __future__ import annotations

import time

import pytest
from channels.layers import channel_layers
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from tests.web.conftest import SHORT_GAME
from webapp.analyses.gameinput import parse_pgn
from webapp.analyses.jobs import create_job
from webapp.analyses.models import AnalysisJob
from webapp.analyses.routing import websocket_urlpatterns
from webapp.embedded_redis import EmbeddedRedis

pytestmark = pytest.mark.django_db(transaction=True)


def use_redis_layer(settings, address: str) -> None:
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
                                           "CONFIG": {"hosts": [{"address": address, "socket_timeout": 5}]}}}
    channel_layers.backends = {}


def test_a_submission_while_redis_is_down_gets_503_and_saves_nothing(client, material_network, broker_down):
    started = time.monotonic()
    response = client.post("/", {"pgn": SHORT_GAME, "network": "material", "search": "value"})
    print(f"\n503 after {time.monotonic() - started:.2f} s")
    assert response.status_code == 503
    assert "queue is unavailable" in response.content.decode()
    assert response["Retry-After"] == "30"
    assert SHORT_GAME.split()[1] in response.content.decode()  # the form keeps what was entered
    assert AnalysisJob.objects.count() == 0


def test_a_websocket_that_connects_while_redis_is_down_gets_the_snapshot_then_1013(
        material_network, settings, tmp_path):
    use_redis_layer(settings, f"unix://{tmp_path}/nobody.sock")
    job = create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False)

    async def scenario():
        viewer = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/jobs/{job.id}/")
        connected, _ = await viewer.connect(timeout=20)
        assert connected
        assert (await viewer.receive_json_from(timeout=10))["kind"] == "snapshot"
        told = await viewer.receive_json_from(timeout=10)
        assert told["kind"] == "live" and told["state"] == "lost"
        assert await viewer.receive_output(timeout=10) == {"type": "websocket.close", "code": 1013}

    from asgiref.sync import async_to_sync

    async_to_sync(scenario)()


def test_connected_viewers_are_told_when_redis_goes_away(material_network, settings, tmp_path):
    server = EmbeddedRedis(tmp_path / "redis.sock").start()
    use_redis_layer(settings, server.url)
    settings.SIGHTLINE_LIVE_CHECK_S = 0.2
    job = create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False)

    async def scenario():
        viewer = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/jobs/{job.id}/")
        assert (await viewer.connect(timeout=20))[0]
        assert (await viewer.receive_json_from(timeout=10))["kind"] == "snapshot"
        assert await viewer.receive_nothing(timeout=0.6)  # Redis answers: nothing to say
        server.stop()
        told = await viewer.receive_json_from(timeout=10)
        assert told["kind"] == "live" and told["state"] == "lost"
        assert await viewer.receive_output(timeout=10) == {"type": "websocket.close", "code": 1013}
        await viewer.disconnect()

    from asgiref.sync import async_to_sync

    try:
        async_to_sync(scenario)()
    finally:
        server.stop()
