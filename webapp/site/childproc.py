"""Child processes that cannot outlive the process that started them.

``serve`` starts Redis, a Celery worker and the web server in their own sessions (so
a terminal's Ctrl+C reaches only ``serve``, which stops them in order). If
``serve`` itself is killed outright, Linux's parent-death signal still stops
them instead of leaving orphans.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def spawn(command: list[str], nice: int = 0, **kwargs) -> subprocess.Popen:
    """``Popen`` in a new session, terminated when this process dies; ``nice`` lowers its CPU priority
    (the background lane's worker yields the CPU to the one running users' analyses)."""
    def prepare() -> None:
        _die_with_parent()
        if nice:
            os.nice(nice)

    return subprocess.Popen(command, start_new_session=True, preexec_fn=prepare, **kwargs)
