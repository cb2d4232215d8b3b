"""workers.dispatch against a live Redis: a task goes out by name on the queue it is given, and the
background work (an upload's check, a variant's check, a head atlas) goes to the background lane, which
only serve's background worker consumes, never behind the analyses queued on cpu/gpu nor in their slots."""

from __future__ import annotations

import base64
import json

import pytest
import redis
from celery import Celery

from webapp.site.management.commands.serve import (BACKGROUND_NICE, ONDEMAND_NICE, background_worker_command,
                                                   ondemand_worker_command, worker_command)
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


def test_an_upload_check_goes_to_the_background_lane_not_the_networks(live_broker, tiny_network, settings):
    for job in ("a", "b", "c"):
        send_task("sightline.run_analysis", [job], queue=tiny_network.queue)
    dispatch_check(tiny_network)
    assert settings.SIGHTLINE_BACKGROUND_QUEUE == "background" and tiny_network.queue == "cpu"
    assert queued(live_broker, "background") == [("sightline.check_network", [tiny_network.pk])]
    assert [name for name, _ in queued(live_broker, "cpu")] == ["sightline.run_analysis"] * 3


@pytest.mark.django_db(transaction=True)
def test_a_head_atlas_goes_to_the_background_lane_not_its_networks_queue(live_broker, tiny_network):
    from webapp.networks.atlas import request_atlas

    assert request_atlas(tiny_network) is not None  # sent on commit: autocommit here
    assert queued(live_broker, "background") == [("sightline.compute_head_atlas", [tiny_network.pk])]
    assert live_broker.llen(tiny_network.queue) == 0


def queues_of(command: list[str]) -> list[str]:
    return command[command.index("-Q") + 1].split(",")


@pytest.mark.parametrize("asked, consumed", [("gpu,cpu", ["gpu", "cpu"]), ("gpu", ["gpu"]),
                                             ("background,cpu", ["cpu"]), ("ondemand,gpu,cpu", ["gpu", "cpu"])])
def test_serves_users_worker_never_consumes_the_background_or_on_demand_lanes(asked, consumed):
    command = worker_command({"queues": asked, "pool": "threads", "concurrency": 2})
    assert queues_of(command) == consumed
    assert command[command.index("-A") + 1] == "workers.celery_app"


def test_serves_background_worker_consumes_only_the_background_lane_one_at_a_time():
    command, users = background_worker_command(), worker_command({"queues": "gpu,cpu", "pool": "threads",
                                                                 "concurrency": 2})
    assert queues_of(command) == ["background"] and command[command.index("--concurrency") + 1] == "1"
    assert command[command.index("-n") + 1] != users[users.index("-n") + 1]  # two workers, two names
    assert BACKGROUND_NICE > 0


def test_a_spawned_child_runs_at_the_niceness_asked():
    import os
    import subprocess
    import sys

    from webapp.site.childproc import spawn

    ask = "import os; print(os.nice(0))"
    plain = spawn([sys.executable, "-c", ask], stdout=subprocess.PIPE)
    niced = spawn([sys.executable, "-c", ask], nice=BACKGROUND_NICE, stdout=subprocess.PIPE)
    base = int(plain.communicate(timeout=30)[0])
    assert base == os.nice(0)
    assert int(niced.communicate(timeout=30)[0]) == min(19, base + BACKGROUND_NICE)


@pytest.mark.parametrize("pool, slots", [("threads", "2"), ("solo", "1")])
def test_serves_on_demand_worker_consumes_only_the_on_demand_lane(pool, slots, settings):
    settings.SIGHTLINE_ONDEMAND_SLOTS = 2
    opts = {"queues": "gpu,cpu", "pool": pool, "concurrency": 4}
    command, users = ondemand_worker_command(opts), worker_command(opts)
    assert queues_of(command) == ["ondemand"] == [settings.SIGHTLINE_ONDEMAND_QUEUE]
    assert command[command.index("--pool") + 1] == pool and command[command.index("--concurrency") + 1] == slots
    assert command[command.index("-n") + 1] not in (users[users.index("-n") + 1],
                                                    background_worker_command()[command.index("-n") + 1])
    assert 0 < ONDEMAND_NICE < BACKGROUND_NICE


@pytest.mark.django_db
def test_serve_starts_the_on_demand_worker_unless_told_not_to(monkeypatch, tmp_path):
    """The children ``serve`` launches, their command lines noted instead of run."""
    from django.core.management import call_command

    from webapp.site.management.commands import serve

    launched = []

    class Noted:
        def __init__(self, name, start, log, **kwargs):
            self.name, self.process = name, None

        def launch(self):
            launched.append(self.name)
            return self

        def check(self):
            raise KeyboardInterrupt  # stop at the first round of the supervision loop

    monkeypatch.setattr(serve, "SupervisedChild", Noted)
    monkeypatch.setattr(serve.Command, "_register_networks", lambda self: None)
    monkeypatch.setattr(serve, "call_command", lambda *a, **k: None)
    monkeypatch.setattr(serve.settings, "REDIS", RedisUrls.from_env("redis://127.0.0.1:1/0", tmp_path / "r.sock"))
    monkeypatch.setattr(serve.signal, "signal", lambda *args: None)  # Ctrl+C stays the test runner's
    for flags, expected in [([], ["worker", "ondemand", "background", "studies", "web"]),
                            (["--no-ondemand-worker"], ["worker", "background", "studies", "web"]),
                            (["--no-studies-worker"], ["worker", "ondemand", "background", "web"]),
                            (["--no-worker"], ["web"])]:
        launched.clear()
        with pytest.raises(KeyboardInterrupt):
            call_command("serve", *flags)
        assert launched == expected
