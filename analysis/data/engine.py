"""Stockfish through python-chess: limits, scores and one engine per pool worker."""

from __future__ import annotations

import atexit
import shutil
from dataclasses import dataclass

import chess
import chess.engine

from analysis.evaluator import centipawns_to_score


def find_stockfish(path: str | None = None) -> str:
    """``path`` if given, else ``stockfish`` on PATH or in /usr/games."""
    found = path or shutil.which("stockfish") or shutil.which("stockfish", path="/usr/games")
    if not found:
        raise FileNotFoundError("Stockfish not found: install it (apt-get install stockfish) or pass --stockfish PATH")
    return found


@dataclass(frozen=True)
class EngineLimit:
    """How long Stockfish thinks per position; at least one field must be set."""

    depth: int | None = None
    nodes: int | None = None
    time: float | None = None

    def __post_init__(self) -> None:
        if self.depth is None and self.nodes is None and self.time is None:
            raise ValueError("set at least one of depth, nodes, time")
        for name in ("depth", "nodes", "time"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive")

    def limit(self) -> chess.engine.Limit:
        return chess.engine.Limit(depth=self.depth, nodes=self.nodes, time=self.time)

    def describe(self) -> dict:
        return {k: v for k, v in (("depth", self.depth), ("nodes", self.nodes), ("time", self.time)) if v is not None}


def open_engine(path: str, *, threads: int = 1, hash_mb: int = 16, show_wdl: bool = True) -> chess.engine.SimpleEngine:
    engine = chess.engine.SimpleEngine.popen_uci(path)
    options = {"Threads": threads, "Hash": hash_mb}
    if show_wdl and "UCI_ShowWDL" in engine.options:
        options["UCI_ShowWDL"] = True
    engine.configure(options)
    return engine


def engine_version(path: str) -> str:
    engine = chess.engine.SimpleEngine.popen_uci(path)
    try:
        return engine.id.get("name", "unknown")
    finally:
        engine.quit()


def win_probability(score: chess.engine.PovScore, color: chess.Color) -> float:
    """ChessBench win%: 1/(1+exp(-0.00368208 cp)); mate for us -> 1, mate against us -> 0."""
    pov = score.pov(color)
    mate = pov.mate()
    if mate is not None:
        return 1.0 if mate > 0 else 0.0
    return centipawns_to_score(pov.score())


# One engine per pool worker process, opened by the pool initializer.
_WORKER_ENGINE: chess.engine.SimpleEngine | None = None


def init_worker_engine(path: str, hash_mb: int = 16) -> None:
    global _WORKER_ENGINE
    _WORKER_ENGINE = open_engine(path, threads=1, hash_mb=hash_mb)
    atexit.register(_WORKER_ENGINE.quit)


def worker_engine() -> chess.engine.SimpleEngine:
    if _WORKER_ENGINE is None:
        raise RuntimeError("init_worker_engine was not called in this process")
    return _WORKER_ENGINE
