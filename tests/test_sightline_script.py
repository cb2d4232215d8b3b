"""``./sightline serve`` installs Stockfish where it can, as ``test`` does (issue 37: without it the
engine lane was silently absent), and says so where it cannot. The script runs from a copy beside a
stand-in .venv (its python records the call) with apt-get and id stood in on PATH."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _stand_in(path: Path, body: str) -> None:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


@pytest.fixture
def copy(tmp_path) -> Path:
    """The script in a folder of its own, whose .venv is set up already (its stamp matches)."""
    shutil.copy(ROOT / "sightline", tmp_path / "sightline")
    (tmp_path / "requirements.txt").write_text("nothing\n")
    venv = tmp_path / ".venv" / "bin"
    venv.mkdir(parents=True)
    _stand_in(venv / "python", f'echo "python $*" >> "{tmp_path}/calls"')
    (tmp_path / ".venv" / ".requirements.sha256").write_text(
        hashlib.sha256(b"nothing\n").hexdigest() + "\n")
    return tmp_path


def _serve(copy: Path, uid: int) -> subprocess.CompletedProcess:
    bin_dir = copy / "fakebin"
    bin_dir.mkdir()
    _stand_in(bin_dir / "apt-get", f'echo "apt-get $*" >> "{copy}/calls"')
    _stand_in(bin_dir / "id", f"echo {uid}")
    _stand_in(bin_dir / "python3.11", f'exec "{sys.executable}" "$@"')  # the version check: this test's Python
    path = f"{bin_dir}:" + ":".join(p for p in os.environ["PATH"].split(":") if not (Path(p) / "stockfish").exists())
    env = {**os.environ, "PATH": path, "SIGHTLINE_GAMES_DIR": str(copy / "no-games"), "PYTHON": "python3.11"}
    return subprocess.run(["bash", str(copy / "sightline"), "serve", "--port", "8123"], env=env,
                          capture_output=True, text=True, timeout=60)


def test_serve_installs_stockfish_as_root(copy):
    done = _serve(copy, 0)
    assert done.returncode == 0, done.stderr
    calls = (copy / "calls").read_text().splitlines()
    assert "apt-get install -y -qq stockfish" in calls
    assert calls[-1] == "python manage.py serve --port 8123"


def test_serve_says_why_there_is_no_engine_where_it_cannot_install(copy):
    done = _serve(copy, 1000)
    assert done.returncode == 0, done.stderr
    assert "stockfish missing and cannot be installed here" in done.stderr and "without the engine lane" in done.stderr
    assert (copy / "calls").read_text().splitlines() == ["python manage.py serve --port 8123"]
