"""The engine wrapper alone (analysis/engines/reference.py): budgets, the rules' values, a real Stockfish,
and a hung engine that is killed within its time bound."""

from __future__ import annotations

import threading
import time

import chess
import pytest

from analysis.engines.reference import EngineFailure, ReferenceEngine, check_nodes, rules_value
from tests.conftest import require_stockfish
from tests.fake_engine import process_gone, write_fake_engine


def engine_thread_alive(pid: int) -> bool:
    return any(t.name == f"SimpleEngine (pid={pid})" and t.is_alive() for t in threading.enumerate())


def test_budgets_out_of_range_are_refused_with_the_range():
    assert check_nodes(1_000) == 1_000
    for bad in (999, 2_000_001, 0, -5, True, 1.5):
        with pytest.raises(ValueError, match="from 1,000 to 2,000,000"):
            check_nodes(bad)


def test_the_rules_value_finished_games_without_an_engine():
    mate = chess.Board("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")
    assert rules_value(mate).mate == 0 and rules_value(mate).score == 0
    stalemate = chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")
    assert rules_value(stalemate).cp == 0 and rules_value(stalemate).score == 0.5
    assert rules_value(chess.Board()) is None


def test_stockfish_values_a_position_for_the_side_to_move():
    require_stockfish()
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")  # Rd8 mates
    with ReferenceEngine(nodes=5_000) as engine:
        value = engine.analyse(board)
        assert engine.name.startswith("Stockfish")
    assert value.mate == 1 and value.best == "d1d8" and value.score == 1.0
    stored = value.to_json(board)
    assert stored["best_san"] == "Rd8#" and stored["pv_san"][0] == "Rd8#"


def test_a_hung_engine_is_killed_within_its_bound(tmp_path):
    path, pidfile = write_fake_engine(tmp_path, "hang")
    engine = ReferenceEngine(str(path), nodes=1_000, slack_s=0.5).open()
    started = time.monotonic()
    with pytest.raises(EngineFailure, match="did not answer within 2 s"):
        engine.analyse(chess.Board())
    assert time.monotonic() - started < 5
    deadline = time.monotonic() + 5  # SIGKILL is sent at once; the process ends a moment later
    while not process_gone(pidfile) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process_gone(pidfile)
    # and python-chess's thread for it ends too (it would keep the interpreter alive at exit)
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while engine_thread_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not engine_thread_alive(pid)
    with pytest.raises(EngineFailure, match="could not be started"):
        ReferenceEngine(str(tmp_path / "nothing-here")).open()
