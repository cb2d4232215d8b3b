"""Redis down: every kind of task the site sends (an analysis job, a deeper search, attention maps,
a head atlas, an upload's check) gets a 503 with Retry-After and a message, and leaves nothing
queued or pending without a task behind it; asked again once Redis is back, it works. Websocket
viewers are told and closed with 1013 (their page reconnects with back-off and catches up from
the snapshot)."""

from __future__ import annotations

import time

import pytest
from channels.layers import channel_layers
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

import json
from pathlib import Path

from django.core.files.uploadedfile import SimpleUploadedFile

from tests.web.conftest import SHORT_GAME
from webapp.lens import tasks as lens_tasks
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.models import AnalysisJob, AttentionMap, DeepSearch
from webapp.networks.models import HeadAtlas, Network
from webapp.jobs.live.routing import websocket_urlpatterns
from webapp.site.embedded_redis import EmbeddedRedis

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


def unavailable(response) -> str:
    """The broker-down answer every sender gives: 503, Retry-After, a message; its text."""
    assert response.status_code == 503 and response["Retry-After"] == "30"
    text = response.content.decode()
    assert "cannot be reached" in text and "try again in a minute" in text
    return text


@pytest.fixture
def broker_back(monkeypatch):
    """Call to bring the broker back: the task names sent from then on."""
    sent = []

    def back():
        monkeypatch.setattr("workers.dispatch.send_task", lambda name, args, queue, task_id=None: sent.append(name))
        return sent

    return back


def owned_job(client, network, search: str, budget: int) -> AnalysisJob:
    job = create_job(parse_pgn(SHORT_GAME), network, search, budget, dispatch=False)
    session = client.session
    session["owned_jobs"] = [str(job.id)]
    session.save()
    return job


def test_a_deeper_search_while_redis_is_down_is_503_and_leaves_no_row(client, material_network, broker_down,
                                                                       broker_back):
    job = owned_job(client, material_network, "mcts", 16)
    url, body = f"/jobs/{job.id}/deeper/", json.dumps({"node": 0, "budget": 100})
    text = unavailable(client.post(url, body, content_type="application/json"))
    assert "deeper search" in json.loads(text)["error"]
    assert not DeepSearch.objects.exists()
    sent = broker_back()
    assert client.post(url, body, content_type="application/json").status_code == 202
    assert sent == ["sightline.deep_search"] and DeepSearch.objects.get().status == DeepSearch.Status.QUEUED


def test_attention_while_redis_is_down_is_503_leaves_nothing_pending_and_works_later(
        client, tiny_network, broker_down, broker_back):
    """Issue 31 N1: this answered 500 and left the map "pending" for ever, even with ?retry=1."""
    job = create_job(parse_pgn(SHORT_GAME), tiny_network, "policy", 1, dispatch=False)
    url = f"/api/jobs/{job.id}/nodes/2/attention/"
    assert "attention" in unavailable(client.get(url))
    assert not AttentionMap.objects.exists()
    unavailable(client.get(url + "?retry=1"))  # still down: asked again, still said, still nothing kept
    assert not AttentionMap.objects.exists()
    sent = broker_back()
    assert client.get(url).status_code == 202 and sent == ["sightline.compute_attention"]
    assert lens_tasks.compute_attention.run(str(job.id), 2) == AttentionMap.Status.READY
    assert client.get(url).status_code == 200


def test_a_map_left_pending_without_a_task_is_queued_again_on_retry(client, tiny_network, settings, broker_back):
    """Rows an older version left pending when Redis was down: past the broker's redelivery time
    nothing is behind them, so ?retry=1 queues them again (a fresh one is not queued twice)."""
    from datetime import timedelta

    from django.utils import timezone

    job = create_job(parse_pgn(SHORT_GAME), tiny_network, "policy", 1, dispatch=False)
    url = f"/api/jobs/{job.id}/nodes/2/attention/"
    sent = broker_back()
    assert client.get(url).status_code == 202 and len(sent) == 1
    assert client.get(url + "?retry=1").status_code == 202 and len(sent) == 1  # still on its way
    long_ago = timezone.now() - timedelta(seconds=settings.SIGHTLINE_VISIBILITY_TIMEOUT_S + 1)
    AttentionMap.objects.update(created_at=long_ago)
    assert client.get(url).status_code == 202 and len(sent) == 1  # only when asked
    assert client.get(url + "?retry=1").status_code == 202 and len(sent) == 2
    assert AttentionMap.objects.get().status == AttentionMap.Status.PENDING


def test_a_head_atlas_while_redis_is_down_is_503_and_leaves_nothing_queued(client, tiny_network, broker_down,
                                                                          broker_back):
    url = f"/networks/{tiny_network.name}/heads/compute/"
    assert "head atlas" in unavailable(client.post(url))
    assert not HeadAtlas.objects.exists()
    sent = broker_back()
    assert client.post(url).status_code == 302 and sent == ["sightline.compute_head_atlas"]
    assert HeadAtlas.objects.get(network=tiny_network).status == HeadAtlas.Status.QUEUED


def test_a_stale_atlas_asked_again_while_redis_is_down_is_kept_as_it_was(tiny_network, broker_down):
    from webapp.networks.atlas import request_atlas
    from workers.dispatch import BrokerUnavailable

    HeadAtlas.objects.create(network=tiny_network, status=HeadAtlas.Status.FAILED, error="out of memory")
    with pytest.raises(BrokerUnavailable):
        request_atlas(tiny_network, again=True)
    row = HeadAtlas.objects.get(network=tiny_network)
    assert row.status == HeadAtlas.Status.FAILED and row.error == "out of memory"


def test_an_upload_while_redis_is_down_is_refused_and_stores_nothing(admin_client, tiny_checkpoint, broker_down,
                                                                     broker_back, settings):
    data = Path(tiny_checkpoint).read_bytes()

    def add():
        return admin_client.post("/admin/networks/network/add/", {
            "name": "later", "file": SimpleUploadedFile("net.safetensors", data), "card": "", "queue": "cpu",
            "active": "on"})

    assert "later was not added" in unavailable(add())
    assert not Network.objects.filter(name="later").exists()
    stored = Path(settings.MEDIA_ROOT) / "networks"
    assert not stored.exists() or not any(stored.iterdir())  # the stored copy is removed again
    sent = broker_back()
    assert add().status_code == 302 and sent == ["sightline.check_network"]
    assert Network.objects.get(name="later").status == Network.Status.CHECKING


def test_check_again_while_redis_is_down_changes_nothing_and_says_so(admin_client, tiny_network, broker_down,
                                                                     broker_back):
    action = {"action": "check_again", "_selected_action": [tiny_network.pk]}
    response = admin_client.post("/admin/networks/network/", action, follow=True)
    assert "cannot be reached right now, so the check of 1 network(s) was not started" in response.content.decode()
    tiny_network.refresh_from_db()
    assert tiny_network.status == Network.Status.READY
    sent = broker_back()
    admin_client.post("/admin/networks/network/", action)
    assert sent == ["sightline.check_network"]
    assert Network.objects.get(pk=tiny_network.pk).status == Network.Status.CHECKING


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
