"""Shared test fixtures and the rules for optional tools.

Tests that need Stockfish, Chromium, PostgreSQL or the shared reference data
skip with a reason when those are absent locally; under CI=true they fail
instead, so CI always runs every test.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import threading
from pathlib import Path

import pytest

from analysis.engines.stockfish import find_stockfish

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
IN_CI = os.environ.get("CI", "").lower() == "true"


def weights_file(name: str) -> Path:
    """``weights/NAME.safetensors``, or the retired one of that name (``weights/retired/``: no longer
    offered, kept for the figures measured on it and for tests that need its kind of network)."""
    shipped = ROOT / "weights" / f"{name}.safetensors"
    return shipped if shipped.exists() else ROOT / "weights" / "retired" / f"{name}.safetensors"


def shipped_networks(family: str | None = None) -> list[Path]:
    """The checkpoints in ``weights/``, sorted; with ``family``, only that family's."""
    from analysis.checkpoint import read_header

    paths = sorted((ROOT / "weights").glob("*.safetensors"))
    return paths if family is None else [p for p in paths if read_header(p)[0].family == family]


def _missing(reason: str):
    if IN_CI:
        pytest.fail(f"{reason} (CI=true: this test must run in CI)")
    pytest.skip(reason)


def require_stockfish() -> str:
    path = find_stockfish()
    if path is None:
        _missing("Stockfish not found on PATH or in /usr/games (apt-get install stockfish)")
    return path


def require_chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium", path="/usr/bin")
    if path is None:
        _missing("Chromium not found (apt-get install chromium)")
    return path


def require_shared_data(relative: str = "") -> Path:
    path = SHARED_DATA / relative
    if not path.exists():
        _missing(f"shared reference data {path} is absent")
    return path


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory) -> Path:
    """An untrained cf-tiny checkpoint, made once per session."""
    from analysis.checkpoint import save_checkpoint
    from analysis.models.chessformer import PRESETS, Chessformer

    import torch

    torch.manual_seed(0)
    model = Chessformer(PRESETS["cf-tiny"])
    path = tmp_path_factory.mktemp("ckpt") / "cf-tiny.safetensors"
    save_checkpoint(path, model, trained=False, provenance={"source": "tests: random init, seed 0"})
    return path



def pytest_unconfigure(config):
    """python-chess runs each engine's event loop on a thread that is not a daemon and that waits for
    the engine process's exit. When a child-reaping worker in this process collected that exit first,
    the thread never learns of it and the process stays alive after the summary (CI would wait for its
    limit). Tell such threads the engine has ended, and name the engines so the leak can be found."""
    import gc

    import chess.engine

    # type(), not isinstance(): a dead weak proxy among the objects raises on any attribute read
    engines = [o for o in gc.get_objects() if type(o) is chess.engine.SimpleEngine]
    for engine in engines:
        returncode, loop = engine.protocol.returncode, engine.protocol.loop
        if returncode.done() or loop.is_closed():
            continue
        print(f"note: an engine left open by the tests is ended: {engine.protocol.transport.get_pid()}",
              file=sys.stderr)
        try:
            os.kill(engine.protocol.transport.get_pid(), signal.SIGKILL)
        except OSError:
            pass  # reaped already: the exit below is what the thread waits for
        loop.call_soon_threadsafe(lambda f=returncode: f.done() or f.set_result(-signal.SIGKILL))
        engine.close()
    for thread in threading.enumerate():
        if thread.name.startswith("SimpleEngine"):
            thread.join(10)

