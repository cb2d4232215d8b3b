"""Per-position claims in Redis, so jobs running at once never search the same position twice.

Two identical jobs (or two games sharing an opening) would otherwise both search
every common position. Before searching a position a job claims it (SET NX,
keyed by network, search settings and position); a position another job holds
is put off, and later read from the cache once that job has saved it, or
searched here if the claim went away without a result (its worker died). Claims
expire with the job lease and are renewed with it; a saved position's claim is
left to expire, so a job arriving just after reads the result rather than
searching again. Without Redis (``analyze_pgn``
on a machine without the embedded server) every claim succeeds: nothing is shared.
"""

from __future__ import annotations

import logging
import uuid

import redis
from django.conf import settings

log = logging.getLogger(__name__)

PREFIX = "sightline:claim:"


class PositionClaims:
    def __init__(self, scope: str, *, enabled: bool = True, url: str | None = None):
        """``enabled=False``: every claim succeeds (a search cheaper than a Redis round trip)."""
        self.scope = scope
        self.owner = uuid.uuid4().hex
        self.held: set[str] = set()
        self.client: redis.Redis | None = redis.Redis.from_url(
            url or settings.REDIS.channels, socket_timeout=2, socket_connect_timeout=2) if enabled else None

    def _name(self, key: str) -> str:
        return f"{PREFIX}{self.scope}:{key}"

    def _ttl_ms(self) -> int:
        return int(settings.SIGHTLINE_JOB_LEASE_S * 1000)

    def _call(self, fn, default):
        """Run a Redis call; the first failure turns claims off for this job (compute everything)."""
        if self.client is None:
            return default
        try:
            return fn(self.client)
        except (redis.RedisError, OSError) as exc:
            log.warning("position claims are off for this job (%s: %s)", type(exc).__name__, exc)
            self.client = None
            return default

    def take(self, key: str) -> bool:
        """True when this job may search ``key`` now (nobody else is)."""
        taken = self._call(lambda c: c.set(self._name(key), self.owner, nx=True, px=self._ttl_ms()), True)
        if taken:
            self.held.add(key)
        return bool(taken)

    def held_elsewhere(self, key: str) -> bool:
        owner = self._call(lambda c: c.get(self._name(key)), None)
        return owner is not None and owner.decode() != self.owner

    def renew(self) -> None:
        """Called with each lease renewal: our claims live as long as our lease."""
        held = list(self.held)
        if held:
            self._call(lambda c: [c.pexpire(self._name(k), self._ttl_ms()) for k in held], None)

    def saved(self, keys) -> None:
        """Results saved: stop renewing these claims but let them run out rather than delete them,
        so a job that reaches one of these positions meanwhile waits and reads the saved result
        instead of taking the free claim and searching again."""
        self.held.difference_update(keys)

    def release_all(self) -> None:
        """The job stops (finished, failed, interrupted): positions it did not save are free at once."""
        unsaved, self.held = list(self.held), set()
        if unsaved:
            self._call(lambda c: c.delete(*[self._name(k) for k in unsaved]), None)
