"""The UCI engine: a real UCI client plays a short game against Stockfish; bad input never breaks it."""

from __future__ import annotations

import io
import logging
import re
import sys
import threading
import time

import chess
import chess.engine
import pytest

from analysis.evaluator import MaterialEvaluator, score_to_centipawns
from analysis.search.base import SearchResult
from analysis.search.uci import UCIEngine, allocate_time_ms, format_info
from tests.conftest import ROOT, require_stockfish

INFO_LINE = re.compile(
    r"^info( multipv \d+)? depth \d+ seldepth \d+ time \d+ nodes \d+ nps \d+ "
    r"score (cp -?\d+|mate -?\d+)( upperbound)?( wdl \d+ \d+ \d+)?( pv( [a-h][1-8][a-h][1-8][qrbn]?)+)?$")


class _Capture(logging.Handler):
    """python-chess logs every line it reads from the engine, and every parse error."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.received: list[str] = []
        self.errors: list[str] = []

    def emit(self, record):
        message = record.getMessage()
        if record.levelno >= logging.ERROR:
            self.errors.append(message)
        match = re.search(r"pid=(\d+)\)>: >> (.*)$", message)
        if match:
            self.received.append((int(match.group(1)), match.group(2)))


def test_full_game_against_weakest_stockfish_through_python_chess():
    stockfish_path = require_stockfish()
    capture = _Capture()
    logger = logging.getLogger("chess.engine")
    old_level = logger.level
    logger.setLevel(logging.DEBUG)
    logger.addHandler(capture)
    ours = chess.engine.SimpleEngine.popen_uci(
        [sys.executable, "-m", "analysis", "uci", "--model", "material", "--algo", "mcts"], cwd=ROOT)
    stockfish = chess.engine.SimpleEngine.popen_uci(stockfish_path)
    our_pid = ours.protocol.transport.get_pid()
    try:
        assert ours.id["name"].startswith("Sightline")
        assert {"Algorithm", "Nodes", "CPuct", "MinibatchSize", "Device", "UCI_ShowWDL", "MultiPV"} <= set(ours.options)
        elo_min = stockfish.options["UCI_Elo"].min
        stockfish.configure({"UCI_LimitStrength": True, "UCI_Elo": elo_min, "Threads": 1, "Hash": 16})
        ours.configure({"MinibatchSize": 16})
        board = chess.Board()
        clock = {chess.WHITE: 4.0, chess.BLACK: 4.0}
        plies = 0
        while not board.is_game_over(claim_draw=True) and plies < 30:
            if board.turn == chess.WHITE:
                t0 = time.monotonic()
                result = ours.play(board, chess.engine.Limit(
                    white_clock=clock[chess.WHITE], black_clock=clock[chess.BLACK],
                    white_inc=0.05, black_inc=0.05), info=chess.engine.INFO_ALL)
                clock[chess.WHITE] += 0.05 - (time.monotonic() - t0)
                assert clock[chess.WHITE] > 0, "our engine lost on time"
                assert "score" in result.info and "pv" in result.info and result.info["nodes"] > 0
            else:
                result = stockfish.play(board, chess.engine.Limit(time=0.02))
            assert result.move in board.legal_moves
            board.push(result.move)
            plies += 1
        # Other searches answer too, with node and depth limits.
        for algo, limit in [("alphabeta", chess.engine.Limit(depth=2)),
                            ("probability", chess.engine.Limit(nodes=500)),
                            ("gumbel", chess.engine.Limit(nodes=64)),
                            ("value", chess.engine.Limit(nodes=1))]:
            ours.configure({"Algorithm": algo})
            if not board.is_game_over():
                assert ours.play(board, limit).move in board.legal_moves
        info = ours.analyse(chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"),
                            chess.engine.Limit(depth=1))
        assert info["score"].white() == chess.engine.Mate(1)
        # MultiPV: python-chess asks for 3 lines; each names a different move, the best first.
        hanging = chess.Board("4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1")  # Rxd5 wins the queen
        for algo, limit in [("mcts", chess.engine.Limit(nodes=300)), ("alphabeta", chess.engine.Limit(depth=2))]:
            ours.configure({"Algorithm": algo})
            lines = ours.analyse(hanging, limit, multipv=3)
            assert [line["multipv"] for line in lines] == [1, 2, 3], algo
            firsts = [line["pv"][0] for line in lines]
            assert len(set(firsts)) == 3 and firsts[0] == chess.Move.from_uci("d2d5"), (algo, firsts)
            assert lines[0]["score"].relative > lines[1]["score"].relative, algo
    finally:
        ours.quit()
        stockfish.quit()
        logger.removeHandler(capture)
        logger.setLevel(old_level)
    assert plies >= 10
    ours_info = [line for pid, line in capture.received
                 if pid == our_pid and line.startswith("info") and not line.startswith("info string")]
    assert len(ours_info) >= 15
    bad = [line for line in ours_info if not INFO_LINE.match(line)]
    assert not bad, bad
    assert not capture.errors, capture.errors


def _engine() -> tuple[UCIEngine, io.StringIO]:
    out = io.StringIO()
    return UCIEngine(lambda device: MaterialEvaluator(), algorithm="alphabeta", out=out), out


def _wait_for(out: io.StringIO, prefix: str, timeout: float = 10.0) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for line in out.getvalue().splitlines():
            if line.startswith(prefix):
                return line
        time.sleep(0.01)
    raise AssertionError(f"no line starting with {prefix!r} in {out.getvalue()!r}")


@pytest.mark.parametrize("line", [
    "position", "position fen not a fen", "position startpos moves e2e5", "position startpos moves zz",
    "position somewhere", "position startpos e2e4", "go depth", "go nodes many", "go depth -3",
    "setoption", "setoption name Nodes value -5", "setoption name Algorithm value minimax",
    "setoption name CPuct value fast", "setoption name CPuct value inf", "setoption name UCI_ShowWDL value maybe",
    "setoption name NoSuchOption value 1", "setoption name MultiPV value 0", "frobnicate", "go wtime 100 btime",
    "position fen 8/8/8/8/8/8/8/8 w - - 0 1", "position fen 4k3/8/8/8/8/8/4P3/4K3 w - - 65536 1",
])
def test_malformed_commands_get_an_info_string_and_the_engine_carries_on(line):
    engine, out = _engine()
    engine.handle("position startpos moves e2e4")
    before = engine.board.copy()
    assert engine.handle(line) is True
    assert out.getvalue().splitlines()[-1].startswith("info string")
    assert engine.board == before and engine.board.move_stack == before.move_stack
    engine.handle("isready")
    assert out.getvalue().splitlines()[-1] == "readyok"
    engine.handle("go depth 1")
    bestmove = _wait_for(out, "bestmove").split()[1]
    assert chess.Move.from_uci(bestmove) in before.legal_moves
    engine.handle("quit")


def test_go_infinite_waits_for_stop_and_position_moves_apply():
    engine, out = _engine()
    engine.handle("uci")
    assert out.getvalue().splitlines()[-1] == "uciok"
    engine.handle("position fen 6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1 moves g1f1 g8f8")
    assert engine.board.fen().startswith("5k2/5ppp/8/8/8/8/5PPP/R4K2 w")
    engine.handle("go infinite")
    time.sleep(0.3)
    assert "bestmove" not in out.getvalue()
    t0 = time.monotonic()
    engine.handle("stop")
    assert time.monotonic() - t0 < 1.0
    assert _wait_for(out, "bestmove").startswith("bestmove ")
    engine.handle("ucinewgame")
    assert engine.handle("quit") is False


def test_stop_right_after_go_infinite_is_not_lost_when_the_search_thread_starts_late(monkeypatch):
    # A busy machine may schedule the search thread after "stop" has arrived; Search.run
    # clears its stop flag on entry, so a single stop request would be lost and the
    # engine would search (and block the command loop) forever.
    from analysis.search import base

    original = base.Search.run

    def late_run(self, *args, **kwargs):
        time.sleep(0.05)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(base.Search, "run", late_run)
    engine, out = _engine()
    engine.handle("position startpos")
    done = threading.Thread(target=lambda: (engine.handle("go infinite"), engine.handle("stop")), daemon=True)
    done.start()
    done.join(timeout=5)
    assert not done.is_alive(), "stop was lost: the engine is still searching"
    assert chess.Move.from_uci(_wait_for(out, "bestmove").split()[1]) in chess.Board().legal_moves
    engine.handle("quit")


def test_go_right_after_bestmove_starts_a_new_search_while_the_old_thread_is_still_returning():
    # A GUI may send the next go as soon as it reads bestmove, before the search thread that
    # wrote it has returned; "already searching" then left python-chess waiting forever.
    engine, out = _engine()
    send = engine.send

    def slow_after_bestmove(line: str) -> None:
        send(line)
        if line.startswith("bestmove") and threading.current_thread().name == "uci-search":
            time.sleep(0.3)  # the thread has answered but not yet returned

    engine.send = slow_after_bestmove
    engine.handle("position startpos")
    engine.handle("go depth 1")
    _wait_for(out, "bestmove")
    engine.handle("position startpos moves e2e4")
    engine.handle("go depth 1")
    time.sleep(0.1)
    assert "already searching" not in out.getvalue()
    end = time.monotonic() + 10
    while out.getvalue().count("bestmove") < 2 and time.monotonic() < end:
        time.sleep(0.01)
    second = [line for line in out.getvalue().splitlines() if line.startswith("bestmove")][1].split()[1]
    assert chess.Move.from_uci(second) in chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1").legal_moves
    engine.handle("quit")


def test_bestmove_0000_when_the_game_is_over():
    engine, out = _engine()
    engine.handle("position fen R5k1/5ppp/8/8/8/8/5PPP/6K1 b - - 1 1")
    engine.handle("go depth 2")
    assert _wait_for(out, "bestmove") == "bestmove 0000"


def test_info_line_uses_the_inverse_win_percentage_and_permille_wdl():
    move = chess.Move.from_uci("e2e4")
    result = SearchResult("mcts", move, [move], 0.73, (0.6, 0.26, 0.14), 1234, 0.5, depth=5, seldepth=9)
    line = format_info(result)
    assert INFO_LINE.match(line)
    assert f"score cp {score_to_centipawns(0.73)}" in line
    assert " wdl 600 260 140 " in line and line.endswith("pv e2e4")
    mate = SearchResult("alphabeta", move, [move], 1.0, None, 10, 0.1, depth=3, mate=2)
    assert "score mate 2" in format_info(mate) and " wdl " not in format_info(mate)


def test_time_allocation_is_a_share_of_the_clock_and_never_most_of_it():
    assert allocate_time_ms(60_000, 0, None, 50) == pytest.approx(60_000 / 30 - 12, abs=1)
    assert allocate_time_ms(60_000, 1_000, 10, 50) > allocate_time_ms(60_000, 0, 10, 50)
    for remaining in (50, 300, 1_000, 5_000):
        assert allocate_time_ms(remaining, 0, 1, 50) <= max(10, remaining / 2)
