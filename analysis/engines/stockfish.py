"""Stockfish, found once: where its binary is, starting it, and its name.

Every caller that starts Stockfish (the engine lane's reference engine, the data annotator, the
evaluation's Stockfish agent, benches and tests) finds it here, so "which Stockfish" has one answer:
the path given (the site's ``SIGHTLINE_ENGINE_PATH``, a command's ``--stockfish``), else
``stockfish`` on PATH, else in /usr/games (Debian's package puts it there, off most PATHs).
"""

from __future__ import annotations

import shutil

import chess.engine

def find_stockfish(path: str | None = None) -> str | None:
    """``path`` if given, else ``stockfish`` on PATH or in /usr/games; None when there is none."""
    if path:
        return path
    return shutil.which("stockfish") or shutil.which("stockfish", path="/usr/games")


def require_stockfish(path: str | None = None) -> str:
    """``find_stockfish(path)``, or FileNotFoundError saying how to get one."""
    found = find_stockfish(path)
    if not found:
        raise FileNotFoundError("Stockfish not found: install it (apt-get install stockfish) or pass --stockfish PATH")
    return found


def open_stockfish(path: str, *, threads: int = 1, hash_mb: int = 16,
                   show_wdl: bool = True) -> chess.engine.SimpleEngine:
    """A running Stockfish at ``path`` with ``threads`` and ``hash_mb``, WDL shown where it can."""
    engine = chess.engine.SimpleEngine.popen_uci(path)
    options = {"Threads": threads, "Hash": hash_mb}
    if show_wdl and "UCI_ShowWDL" in engine.options:
        options["UCI_ShowWDL"] = True
    engine.configure(options)
    return engine


def stockfish_version(path: str) -> str:
    """The name the engine at ``path`` gives itself (``id name``), for a dataset's card."""
    engine = chess.engine.SimpleEngine.popen_uci(path)
    try:
        return engine.id.get("name", "unknown")
    finally:
        engine.quit()
