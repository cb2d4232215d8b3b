"""Watches the channel layer's Redis for the websocket consumers of this process.

When Redis goes away, pushed messages stop without any error reaching the
consumers (the layer reconnects quietly), and viewers would wait in silence.
One watcher per event loop pings Redis every ``SIGHTLINE_LIVE_CHECK_S``
seconds while anyone is connected; on a failure every consumer tells its page
and closes with 1013 (try again later), which the page's htmx websocket
extension answers by reconnecting with back-off; the reconnect's snapshot
from the database fills whatever was missed.
"""

from __future__ import annotations

import asyncio
import logging
import weakref

import redis.asyncio as aioredis
from django.conf import settings

log = logging.getLogger(__name__)

CLOSE_TRY_AGAIN_LATER = 1013


def layer_address() -> str | None:
    """The channel layer's Redis URL; None for a layer without Redis (the tests' in-memory one)."""
    layer = settings.CHANNEL_LAYERS["default"]
    if not layer["BACKEND"].startswith("channels_redis."):
        return None
    host = layer["CONFIG"]["hosts"][0]
    return host["address"] if isinstance(host, dict) else host


async def redis_answers(address: str, timeout: float = 2.0) -> bool:
    client = aioredis.Redis.from_url(address, socket_timeout=timeout, socket_connect_timeout=timeout)
    try:
        return bool(await client.ping())
    except (aioredis.RedisError, OSError, asyncio.TimeoutError):
        return False
    finally:
        await client.aclose()


class _Watcher:
    def __init__(self):
        self.consumers: weakref.WeakSet = weakref.WeakSet()
        self.task: asyncio.Task | None = None

    def add(self, consumer) -> None:
        self.consumers.add(consumer)
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._watch())

    def discard(self, consumer) -> None:
        self.consumers.discard(consumer)

    async def _watch(self) -> None:
        while self.consumers:
            await asyncio.sleep(settings.SIGHTLINE_LIVE_CHECK_S)
            address = layer_address()
            if self.consumers and address and not await redis_answers(address):
                log.warning("Redis does not answer: closing %d live connections (1013)", len(self.consumers))
                for consumer in list(self.consumers):
                    self.consumers.discard(consumer)
                    await consumer.broker_lost()


_watchers: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Watcher]" = weakref.WeakKeyDictionary()


def watch(consumer) -> None:
    if layer_address() is None:
        return
    loop = asyncio.get_running_loop()
    _watchers.setdefault(loop, _Watcher()).add(consumer)


def unwatch(consumer) -> None:
    watcher = _watchers.get(asyncio.get_running_loop())
    if watcher is not None:
        watcher.discard(consumer)
