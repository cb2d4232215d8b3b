"""One ``REDIS_URL`` spelled the way each client wants it.

Redis is broker, result backend and channel layer at once. The embedded
server listens on a unix socket, which redis-py, kombu and Celery's result
backend each spell differently; a TCP URL is the same for all three.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit


@dataclass(frozen=True)
class RedisUrls:
    """The URLs for one Redis server; ``socket_path`` is set for the embedded one."""

    channels: str
    celery_broker: str
    celery_backend: str
    socket_path: Path | None

    @property
    def embedded(self) -> bool:
        return self.socket_path is not None

    @classmethod
    def for_socket(cls, path: Path) -> "RedisUrls":
        path = Path(path).resolve()
        return cls(
            channels=f"unix://{path}",
            celery_broker=f"redis+socket://{path}",
            celery_backend=f"redis+socket://{path}",
            socket_path=path,
        )

    @classmethod
    def from_env(cls, url: str | None, default_socket: Path) -> "RedisUrls":
        """``url`` as given (redis://, rediss:// or unix://), else the embedded server's socket."""
        if not url:
            return cls.for_socket(default_socket)
        scheme = urlsplit(url).scheme
        if scheme == "unix":
            return cls.for_socket(Path(urlsplit(url).path))
        if scheme not in {"redis", "rediss"}:
            raise ValueError(f"REDIS_URL must start with redis://, rediss:// or unix://, got {url!r}")
        return cls(channels=url, celery_broker=url, celery_backend=url, socket_path=None)
