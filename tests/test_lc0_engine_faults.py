"""lc0 hung or crashed under ``Lc0Engine`` (analysis/engines/lc0.py): the caller gets an error
naming what happened within the deadline, and the process is ended (tests/fake_lc0.py stands in)."""

from __future__ import annotations

import time

import chess
import chess.engine
import pytest

from analysis.engines import lc0 as lc0_engine
from analysis.engines.lc0 import Lc0Engine, Lc0Unavailable
from tests.fake_engine import process_gone
from tests.fake_lc0 import write_fake_lc0


def ended(pidfile) -> bool:
    deadline = time.monotonic() + 10
    while not process_gone(pidfile) and time.monotonic() < deadline:
        time.sleep(0.05)
    return process_gone(pidfile)


def test_a_search_past_its_deadline_is_killed(tmp_path, monkeypatch):
    fake, pidfile = write_fake_lc0(tmp_path, "hang")
    monkeypatch.setattr(lc0_engine, "lc0_path", lambda: str(fake))
    with Lc0Engine(tmp_path / "net.pb.gz", timeout=5) as lc0:
        with pytest.raises(TimeoutError, match="no answer within 1 s"):
            lc0.search(chess.Board(), 100, deadline_s=1)
    assert ended(pidfile)


@pytest.mark.parametrize("mode, error, words", [("silent", Lc0Unavailable, "no answer within 1 s"),
                                                ("crash", chess.engine.EngineTerminatedError, None)])
def test_an_lc0_that_never_starts_or_dies_at_go_is_ended(tmp_path, monkeypatch, mode, error, words):
    fake, pidfile = write_fake_lc0(tmp_path, mode)
    monkeypatch.setattr(lc0_engine, "lc0_path", lambda: str(fake))
    with pytest.raises(error, match=words):
        with Lc0Engine(tmp_path / "net.pb.gz", timeout=1) as lc0:
            lc0.search(chess.Board(), 100, deadline_s=5)
    assert ended(pidfile)
