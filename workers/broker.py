"""kombu's Redis transport, with one fix: a channel whose transport is already closed.

When Redis goes away under a worker that is running a job (acks_late: its message is
unacknowledged), Celery closes the broken connection; closing its channel restores the
unacknowledged message, which needs a Redis client, which kombu builds from the
channel's transport, whose ``client`` the connection has already set to None. kombu
5.7 raises ``AttributeError: 'NoneType' object has no attribute 'hostname'`` there,
which is not a connection error, so the worker died ("Unrecoverable error") instead of
reconnecting; the job's late ack through the same stale channel failed the same way.

Here that case raises a connection error instead, which kombu and Celery handle: the
channel close and the ack are skipped and logged, the worker reconnects, and the
message stays in Redis's unacknowledged set until its visibility timeout, when a
redelivery finds the job finished (the job's lease decides, not the broker).
"""

from __future__ import annotations

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError


class Channel(kombu_redis.Channel):
    def _connparams(self, asynchronous=False):
        if self.connection.client is None:
            raise RedisConnectionError("this channel's broker connection is already closed")
        return super()._connparams(asynchronous=asynchronous)


class Transport(kombu_redis.Transport):
    Channel = Channel
