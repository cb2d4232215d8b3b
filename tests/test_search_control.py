"""Budgets, progress events, cancellation, tree reuse, the registry and the search CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import chess
import pytest

from analysis.evaluator import MaterialEvaluator
from analysis.search import (Budget, GumbelSettings, MCTSSettings, make_search, make_settings, run_search,
                             search_names)
from analysis.search.base import PROGRESS_INTERVAL
from tests.conftest import ROOT

UNBOUNDED = {"gumbel": GumbelSettings(simulations=10**7)}


def stop_while_running(name: str, board: chess.Board):
    """Start an unbounded search, stop it from this thread; (seconds stop() took, results)."""
    search = make_search(name, MaterialEvaluator(), UNBOUNDED.get(name))
    box = {}
    worker = threading.Thread(target=lambda: box.update(result=search.run(board, Budget())))
    worker.start()
    time.sleep(0.4)
    assert search.running
    t0 = time.monotonic()
    result = search.stop()
    waited = time.monotonic() - t0
    worker.join(timeout=5)
    assert not worker.is_alive()
    return waited, result, box["result"]


@pytest.mark.parametrize("name", ["mcts", "gumbel", "probability", "alphabeta"])
def test_stop_returns_the_best_so_far_within_200_ms(name):
    board = chess.Board()
    # The contract is 200 ms; a machine busy with other work can deschedule the
    # search thread for longer once, so the fastest of three stops must meet it.
    waits = []
    for _ in range(3):
        waited, result, returned = stop_while_running(name, board)
        assert result is not None and result.best_move in board.legal_moves
        assert result.stopped and returned.stopped
        assert returned.best_move in board.legal_moves
        waits.append(waited)
        if waited < 0.2:
            break
    assert min(waits) < 0.2, waits


def test_mcts_tree_is_reused_after_the_moves_are_played():
    board = chess.Board()  # Sightline's counting: N new playouts (lc0's preset: tests/test_lc0_search.py)
    search = make_search("mcts", MaterialEvaluator(), {"preset": "sightline"})
    first = search.run(board, Budget(nodes=600))
    move = first.best_move
    child = search.root.children[search.root.child_index(move)]
    reply = first.pv[1] if len(first.pv) > 1 else next(iter(child.moves))
    grandchild = child.children[child.child_index(reply)]
    kept = grandchild.visits
    assert kept > 1
    board.push(move)
    board.push(reply)
    second = search.run(board, Budget(nodes=100))
    assert search.root is grandchild
    assert search.root.visits == kept + 100
    assert second.nodes == 100
    assert sum(r.visits for r in second.root) == kept + 100 - 1


class _FailsOnce(MaterialEvaluator):
    """Raises on its second call (the first batch after the root), like a CUDA OOM would."""

    def __init__(self):
        self.calls = 0

    def evaluate(self, boards, **kwargs):
        self.calls += 1
        if self.calls == 2:
            raise RuntimeError("simulated evaluator failure")
        return super().evaluate(boards, **kwargs)


def test_mcts_recovers_after_an_evaluator_failure():
    # The failed batch's leaves stay pending; reusing that tree would collide on them forever.
    search = make_search("mcts", _FailsOnce())
    board = chess.Board()
    with pytest.raises(RuntimeError, match="simulated"):
        search.run(board, Budget(nodes=200))
    box = {}
    worker = threading.Thread(target=lambda: box.update(result=search.run(board, Budget(nodes=200))),
                              daemon=True)
    worker.start()
    worker.join(timeout=10)
    if worker.is_alive():
        search.stop()
        worker.join(timeout=5)
        pytest.fail("MCTS made no progress after the evaluator failure")
    assert box["result"].nodes == 200 and box["result"].best_move in board.legal_moves


def test_tree_is_rebuilt_for_an_unrelated_position():
    search = make_search("mcts", MaterialEvaluator())
    search.run(chess.Board(), Budget(nodes=100))
    old = search.root
    search.run(chess.Board("4k3/8/8/8/8/8/8/QN2K3 w - - 0 1"), Budget(nodes=50))
    assert search.root is not old and search.root.visits == 50


def test_budgets_nodes_and_depth():
    board = chess.Board()
    ev = MaterialEvaluator()
    assert run_search("mcts", board, ev, budget=Budget(nodes=77)).nodes == 77
    assert run_search("gumbel", board, ev, budget=Budget(nodes=50)).nodes == 50
    assert run_search("alphabeta", board, ev, budget=Budget(depth=2)).depth == 2
    t0 = time.monotonic()
    result = run_search("mcts", board, ev, budget=Budget(movetime_ms=300))
    assert 0.3 <= time.monotonic() - t0 and result.nodes > 0
    with pytest.raises(ValueError):
        Budget(nodes=0)


def test_progress_events_are_rate_limited_and_end_with_the_final_result():
    events = []
    t0 = time.monotonic()
    result = run_search("mcts", chess.Board(), MaterialEvaluator(), budget=Budget(movetime_ms=700),
                        progress=events.append)
    elapsed = time.monotonic() - t0
    assert events[-1] is result and result.final
    running = events[:-1]
    assert 1 <= len(running) <= elapsed / PROGRESS_INTERVAL + 1
    assert all(not e.final and e.best_move is not None and e.pv and e.root for e in running)
    assert [e.nodes for e in running] == sorted(e.nodes for e in running)
    assert all(e.elapsed_s > 0 and e.nps > 0 for e in running)


def test_dirichlet_noise_is_off_by_default_and_changes_root_priors_when_on():
    board = chess.Board()
    plain = make_search("mcts", MaterialEvaluator())
    plain.run(board, Budget(nodes=10))
    assert set(plain.root.P.round(12)) == {round(1 / 20, 12)}
    noisy = make_search("mcts", MaterialEvaluator(), MCTSSettings(noise=True, seed=1))
    noisy.run(board, Budget(nodes=10))
    assert abs(noisy.root.P.sum() - 1) < 1e-9 and len(set(noisy.root.P.round(12))) > 1


def test_registry_and_settings_errors():
    assert search_names() == ("policy", "value", "mcts", "gumbel", "probability", "alphabeta")
    assert make_settings("mcts", {"cpuct": "2.5", "noise": "true"}).cpuct == 2.5
    with pytest.raises(ValueError, match="unknown search"):
        make_search("minimax", MaterialEvaluator())
    with pytest.raises(ValueError, match="unknown mcts setting"):
        make_settings("mcts", {"cpuctt": 1})
    with pytest.raises(ValueError, match="cpuct"):
        make_settings("mcts", {"cpuct": "fast"})
    for bad in ("inf", "nan", "0"):
        with pytest.raises(ValueError, match="cpuct"):
            make_settings("mcts", {"cpuct": bad})
    with pytest.raises(ValueError):
        make_settings("gumbel", {"max_considered_actions": 0})
    with pytest.raises(TypeError):
        make_search("mcts", MaterialEvaluator(), GumbelSettings())


def test_json_contract_of_the_search_command():
    out = subprocess.run(
        [sys.executable, "-m", "analysis", "search", "--model", "material", "--algo", "mcts",
         "--fen", "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1", "--nodes", "100", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data) == {"bestmove", "pv", "score", "wdl", "nodes", "nps", "root"}
    assert data["bestmove"] == "a1a8" and data["pv"][0] == "a1a8" and data["score"] == 1.0
    assert data["wdl"] == [1.0, 0.0, 0.0]
    assert all(set(r) == {"move", "visits", "q", "prior", "score"} for r in data["root"])
    bad = subprocess.run(
        [sys.executable, "-m", "analysis", "search", "--model", "material", "--algo", "alphabeta",
         "--fen", "8/8/8/8/8/8/8/8 w - - 0 1", "--json"], cwd=ROOT, capture_output=True, text=True,
        timeout=120)
    assert bad.returncode == 2 and "illegal position" in bad.stderr and bad.stdout == ""
