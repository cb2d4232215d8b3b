"""Stockfish as the yardstick beside a network: one position at a time, every call bounded in time.

The site analyses each position with the network and, beside it, with this engine (the "engine
lane"), so that move marks and accuracy come from a strong engine as lichess's do, and the
network's values can be compared with it. python-chess speaks UCI to the engine; a missing,
crashing or hanging engine becomes an ``EngineFailure`` with a sentence for people, and the
caller carries on without the engine: nothing here waits forever.

Values are for the side to move (as the evaluators give theirs): centipawns, a mate distance
(positive when the side to move mates, 0 when it is checkmated), and an expected score in [0, 1]
from lichess's win-% curve (``analysis.game_review.win_percent``).
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass, field

import chess
import chess.engine

from analysis.engines.stockfish import find_stockfish
from analysis.game_review import win_percent

# The default budget: a fixed node count per position (reproducible across machines, unlike a time),
# small enough that an 80-ply game stays well under a minute on one core (bench/engine_lane.py).
DEFAULT_NODES = 100_000
MIN_NODES, MAX_NODES = 1_000, 2_000_000
# Every call is bounded: the engine is also told to stop after this long per position (a node
# count alone gives python-chess no timeout), assuming at least this many nodes per second ...
SLOWEST_NPS = 25_000
MIN_THINK_S = 1.0
# ... and python-chess gives up this many seconds after that (a hung engine: EngineFailure).
DEFAULT_SLACK_S = 10.0
PV_MOVES = 12


class EngineFailure(Exception):
    """The engine is missing, died or stopped answering; ``str()`` is the sentence to show."""


def check_nodes(nodes: int) -> int:
    """``nodes`` if it is a budget the engine lane takes, else ValueError saying the range."""
    if isinstance(nodes, bool) or not isinstance(nodes, int) or not MIN_NODES <= nodes <= MAX_NODES:
        raise ValueError(f"the engine's budget must be a whole number of nodes from {MIN_NODES:,} to "
                         f"{MAX_NODES:,} per position (or 0 for no engine), not {nodes!r}")
    return nodes


@dataclass(frozen=True)
class EngineValue:
    """The engine's verdict on one position, for the side to move."""

    cp: int | None
    mate: int | None
    best: str | None = None
    pv: list[str] = field(default_factory=list)
    depth: int = 0
    nodes: int = 0

    @property
    def score(self) -> float:
        """Expected score for the side to move: lichess's win % / 100 (mates are 1 or 0)."""
        if self.mate is not None:
            return 1.0 if self.mate > 0 else 0.0
        return win_percent(self.cp) / 100.0

    def to_json(self, board: chess.Board) -> dict:
        """As stored (side to move), with the best move and line also in SAN for ``board``."""
        pv_san, scratch = [], board.copy(stack=False)
        for uci in self.pv:
            move = chess.Move.from_uci(uci)
            if not scratch.is_legal(move):
                break
            pv_san.append(scratch.san(move))
            scratch.push(move)
        return {"cp": self.cp, "mate": self.mate, "score": round(self.score, 5), "best": self.best,
                "best_san": pv_san[0] if pv_san and self.best == self.pv[0] else None,
                "pv": self.pv, "pv_san": pv_san, "depth": self.depth, "nodes": self.nodes}


def rules_value(board: chess.Board) -> EngineValue | None:
    """The rules' verdict where the game is over on the board (no engine needed), else None."""
    if board.is_checkmate():
        return EngineValue(cp=None, mate=0)
    if board.is_game_over():
        return EngineValue(cp=0, mate=None)
    return None


def value_from_info(info: dict, board: chess.Board) -> EngineValue:
    score = info["score"].pov(board.turn)
    pv = [m.uci() for m in info.get("pv", [])[:PV_MOVES]]
    return EngineValue(cp=score.score(), mate=score.mate(), best=pv[0] if pv else None, pv=pv,
                       depth=int(info.get("depth", 0)), nodes=int(info.get("nodes", 0)))


class ReferenceEngine:
    """One engine process for a run of positions (a job's): ``with ReferenceEngine(...) as e: e.analyse(b)``.

    ``nodes`` per position; ``slack_s``: how long past the position's time cap python-chess waits
    for an answer before the engine counts as hung (it is then killed).
    """

    def __init__(self, path: str | None = None, nodes: int = DEFAULT_NODES, *, slack_s: float = DEFAULT_SLACK_S,
                 hash_mb: int = 32, threads: int = 1):
        self.path, self.nodes, self.slack_s = find_stockfish(path), check_nodes(nodes), slack_s
        self.options = {"Threads": threads, "Hash": hash_mb}
        self.think_s = max(MIN_THINK_S, nodes / SLOWEST_NPS)
        self._engine: chess.engine.SimpleEngine | None = None
        self.name = ""

    def open(self) -> "ReferenceEngine":
        if self.path is None:
            raise EngineFailure("Stockfish is not installed here (apt-get install stockfish), so there is no "
                                "engine line; the network's analysis is complete without it.")
        try:
            self._engine = chess.engine.SimpleEngine.popen_uci(self.path, timeout=self.slack_s)
            self._engine.configure({k: v for k, v in self.options.items() if k in self._engine.options})
        except Exception as exc:  # missing file, not an engine, no answer to "uci": all the same to a user
            self.close(kill=True)
            raise EngineFailure(f"Stockfish could not be started ({self.path}: {_describe(exc)}), so there is "
                                "no engine line; the network's analysis goes on without it.") from None
        self.name = self._engine.id.get("name", "UCI engine")
        return self

    def analyse(self, board: chess.Board, game: object = None, nodes: int | None = None) -> EngineValue:
        """The engine's value of ``board`` (its move stack is sent too: repetitions count); ``nodes``
        overrides the engine's budget for this position (a mark's confirmation searches deeper)."""
        over = rules_value(board)
        if over is not None:
            return over
        if self._engine is None:
            raise EngineFailure("the engine is not running")
        budget = self.nodes if nodes is None else check_nodes(nodes)
        self.think_s = max(MIN_THINK_S, budget / SLOWEST_NPS)  # this call's cap (and its timeout's sentence)
        limit = chess.engine.Limit(nodes=budget, time=self.think_s)
        try:
            info = self._engine.analyse(board, limit, game=game)
        except Exception as exc:
            self.close(kill=True)
            raise EngineFailure(self._stopped_message(exc)) from None
        if "score" not in info:
            self.close(kill=True)
            raise EngineFailure(f"{self.name} gave no score for {board.fen()}; the engine line stops here.")
        return value_from_info(info, board)

    def _stopped_message(self, exc: Exception) -> str:
        if isinstance(exc, TimeoutError):
            what = f"did not answer within {self.think_s + self.slack_s:.0f} s (it was stopped)"
        elif isinstance(exc, chess.engine.EngineTerminatedError):
            what = "stopped unexpectedly (it crashed or was killed)"
        else:
            what = f"failed ({_describe(exc)})"
        return f"{self.name or 'Stockfish'} {what}; the engine line stops here, the network's analysis goes on."

    def close(self, kill: bool = False) -> None:
        """Ask the engine to quit (within ``slack_s``), then make sure: ``SimpleEngine.close`` kills the
        process. ``kill``: skip the asking (an engine that failed is not asked again)."""
        engine, self._engine = self._engine, None
        if engine is None:
            return
        if not kill:
            try:
                engine.quit()
            except Exception:
                pass
        else:  # at once, not when python-chess's event loop gets to it: a hung engine must not linger
            try:
                os.kill(engine.transport.get_pid(), signal.SIGKILL)
            except (OSError, AttributeError):
                pass  # gone already
            _record_exit_if_lost(engine, self.slack_s)
        engine.close()

    def __enter__(self) -> "ReferenceEngine":
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()


def _record_exit_if_lost(engine: chess.engine.SimpleEngine, after_s: float) -> None:
    """python-chess 1.11 can lose a killed engine's exit: when a timed-out command was cancelled
    first, its ``connection_lost`` raises InvalidStateError before it records the exit code, and
    the engine's (non-daemon) thread then waits for it for ever, keeping the process alive at exit.
    Record the kill ourselves if the exit is still unknown ``after_s`` later."""
    protocol = getattr(engine, "protocol", None)
    if protocol is None:
        return

    def record() -> None:
        if not protocol.returncode.done():
            protocol.returncode.set_result(-signal.SIGKILL)

    try:
        protocol.loop.call_soon_threadsafe(protocol.loop.call_later, after_s, record)
    except RuntimeError:
        pass  # the loop has ended: nothing waits


def _describe(exc: Exception) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
