"""workers.dispatch against a live Redis: a task goes out by name on the queue it is given, and an
upload's check goes to its own queue (which serve's worker consumes), never behind the analyses
queued on cpu/gpu."""

from __future__ import annotations

import base64
import json

import pytest
import redis
from celery import Celery

from webapp.site.management.commands.serve import worker_command
from webapp.site.embedded_redis import EmbeddedRedis
from webapp.networks.admin import dispatch_check
from webapp.site.redis_urls import RedisUrls
from workers.dispatch import send_task


@pytest.fixture
def live_broker(tmp_path):
    """The current Celery app sending to an embedded Redis; a client to read its queues."""
    from workers.celery_app import app as site_app

    server = EmbeddedRedis(tmp_path / "redis.sock").start()
    app = Celery("sightline-live", set_as_current=True)
    app.config_from_object("django.conf:settings", namespace="CELERY")
    app.conf.update(broker_url=RedisUrls.for_socket(server.socket_path).celery_broker)
    app.finalize()
    try:
        yield redis.Redis(unix_socket_path=str(server.socket_path))
    finally:
        site_app.set_current()
        server.stop()


def queued(client: redis.Redis, queue: str) -> list[tuple[str, list]]:
    """(task name, args) of the messages waiting on ``queue``, oldest first."""
    messages = [json.loads(raw) for raw in reversed(client.lrange(queue, 0, -1))]
    return [(m["headers"]["task"], json.loads(base64.b64decode(m["body"]))[0]) for m in messages]


def test_a_task_goes_out_by_name_on_its_queue_with_its_id(live_broker):
    send_task("sightline.run_analysis", ["0f8e"], queue="gpu", task_id="0f8e")
    assert queued(live_broker, "gpu") == [("sightline.run_analysis", ["0f8e"])]
    assert json.loads(live_broker.lindex("gpu", 0))["headers"]["id"] == "0f8e"
    assert live_broker.llen("cpu") == 0


def test_an_upload_check_has_its_own_queue_not_the_networks(live_broker, tiny_network, settings):
    for job in ("a", "b", "c"):
        send_task("sightline.run_analysis", [job], queue=tiny_network.queue)
    dispatch_check(tiny_network)
    assert settings.SIGHTLINE_CHECK_QUEUE == "checks" and tiny_network.queue == "cpu"
    assert queued(live_broker, "checks") == [("sightline.check_network", [tiny_network.pk])]
    assert [name for name, _ in queued(live_broker, "cpu")] == ["sightline.run_analysis"] * 3


@pytest.mark.parametrize("asked, consumed", [("gpu,cpu", "gpu,cpu,checks"), ("gpu", "gpu,checks"),
                                             ("checks,cpu", "checks,cpu")])
def test_serves_worker_always_consumes_the_checks_queue(asked, consumed):
    command = worker_command({"queues": asked, "pool": "threads", "concurrency": 2})
    assert command[command.index("-Q") + 1] == consumed
    assert command[command.index("-A") + 1] == "workers.celery_app"
