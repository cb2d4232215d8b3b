"""The embedded Redis keeps its data (queue, results, leases) across a stop and a crash."""

from __future__ import annotations

import time

import redis

from webapp.site.embedded_redis import EmbeddedRedis


def client(server: EmbeddedRedis) -> redis.Redis:
    return redis.Redis(unix_socket_path=str(server.socket_path), socket_timeout=5)


def test_persisted_data_survives_a_stop_and_a_kill(tmp_path):
    server = EmbeddedRedis(tmp_path / "redis.sock", persist=True).start()
    try:
        assert client(server).config_get("appendonly") == {"appendonly": "yes"}
        client(server).lpush("cpu", "a task")
        server.stop()  # what Ctrl+C does: SIGTERM
        server.start()
        assert client(server).lrange("cpu", 0, -1) == [b"a task"]
        client(server).lpush("cpu", "another")
        time.sleep(1.5)  # appendfsync everysec
        server.process.kill()
        server.process.wait()
        server.start()
        assert client(server).lrange("cpu", 0, -1) == [b"another", b"a task"]
    finally:
        server.stop()


def test_without_persist_nothing_is_written(tmp_path):
    server = EmbeddedRedis(tmp_path / "redis.sock").start()
    try:
        client(server).set("k", "v")
        server.stop()
        server.start()
        assert client(server).get("k") is None
    finally:
        server.stop()
