"""A stand-in for the ``lc0`` executable in the compare-with-lc0 failure tests: it starts as lc0 does
(the UCI options Sightline sets) and then hangs or crashes at ``go``, or never answers at all."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

SCRIPT = '''#!{python}
import os, sys, time

MODE, PIDFILE = {mode!r}, {pidfile!r}
with open(PIDFILE, "w") as handle:
    handle.write(str(os.getpid()))
if MODE == "silent":
    time.sleep(3600)
OPTIONS = ["Backend type string default blas", "Threads type spin default 2 min 1 max 128",
           "VerboseMoveStats type check default false", "SmartPruningFactor type string default 1.33"]
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "uci":
        print("id name FakeLc0", *[f"option name {{o}}" for o in OPTIONS], "uciok", sep="\\n", flush=True)
    elif words[0] == "isready":
        print("readyok", flush=True)
    elif words[0] == "go":
        if MODE == "crash":
            os._exit(3)
        time.sleep(3600)
    elif words[0] == "quit":
        break
'''


def write_fake_lc0(folder: Path, mode: str) -> tuple[Path, Path]:
    """(the executable, the file it writes its pid to); ``mode``: "hang" (never answers ``go``),
    "crash" (exits at ``go``) or "silent" (never answers ``uci``)."""
    path, pidfile = folder / f"lc0-{mode}", folder / f"lc0-{mode}.pid"
    path.write_text(SCRIPT.format(python=sys.executable, mode=mode, pidfile=str(pidfile)))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path, pidfile
