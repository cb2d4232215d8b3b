"""Keeps ``serve``'s children running: one that exits is started again after a back-off.

A crashed Celery worker (or the web server, or the embedded Redis) must not take the
site down; only Ctrl+C stops everything. The back-off doubles with each exit
in a row and starts over once a child has run for a while, so a child that
cannot start (a bad setting) is retried calmly instead of in a tight loop.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Backoff:
    """Seconds to wait before restart number ``n`` (1, 2, ...) of a child that keeps exiting."""

    first: float = 1.0
    factor: float = 2.0
    longest: float = 30.0
    # A child that ran at least this long counts as healthy: its next exit waits ``first`` again.
    healthy_after: float = 60.0

    def delay(self, exits_in_a_row: int) -> float:
        return min(self.longest, self.first * self.factor ** max(0, exits_in_a_row - 1))


@dataclass
class SupervisedChild:
    """One child process: ``start()`` returns its ``Popen``; ``check()`` restarts it when due."""

    name: str
    start: Callable[[], subprocess.Popen]
    log: Callable[[str], None]
    backoff: Backoff = field(default_factory=Backoff)
    process: subprocess.Popen | None = None
    exits_in_a_row: int = 0
    restarts: int = 0
    started_at: float = 0.0
    restart_at: float | None = None

    def launch(self) -> "SupervisedChild":
        self.process = self.start()
        self.started_at = time.monotonic()
        self.restart_at = None
        return self

    def check(self, now: float | None = None) -> None:
        """Notice an exit and schedule the restart; start the child again once its back-off is over."""
        now = time.monotonic() if now is None else now
        if self.restart_at is None:
            if self.process is None or self.process.poll() is None:
                return
            ran = now - self.started_at
            self.exits_in_a_row = 1 if ran >= self.backoff.healthy_after else self.exits_in_a_row + 1
            wait = self.backoff.delay(self.exits_in_a_row)
            self.log(f"the {self.name} process exited with status {self.process.returncode} after {ran:.0f} s; "
                     f"restarting it in {wait:.0f} s")
            self.restart_at = now + wait
        if now >= self.restart_at:
            try:
                self.launch()
            except Exception as exc:  # e.g. Redis did not answer in time: try again later
                self.exits_in_a_row += 1
                self.restart_at = now + self.backoff.delay(self.exits_in_a_row)
                self.log(f"restarting the {self.name} process failed ({exc}); trying again")
                return
            self.restarts += 1
            self.log(f"the {self.name} process is running again (pid {self.process.pid})")
