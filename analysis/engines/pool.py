"""One Stockfish per process of a pool (the data pipeline's workers), opened by the pool's initializer."""

from __future__ import annotations

import atexit

import chess.engine

from analysis.engines.stockfish import open_stockfish

_WORKER_ENGINE: chess.engine.SimpleEngine | None = None


def init_worker_engine(path: str, hash_mb: int = 16) -> None:
    global _WORKER_ENGINE
    _WORKER_ENGINE = open_stockfish(path, threads=1, hash_mb=hash_mb)
    atexit.register(_WORKER_ENGINE.quit)


def worker_engine() -> chess.engine.SimpleEngine:
    if _WORKER_ENGINE is None:
        raise RuntimeError("init_worker_engine was not called in this process")
    return _WORKER_ENGINE
