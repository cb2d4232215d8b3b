"""A stand-in UCI engine for the engine lane's failure tests: it answers like Stockfish (a legal best
move, a score) until its mode makes it crash or hang. ``write_fake_engine`` makes an executable."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

SCRIPT = '''#!{python}
import os, sys, time
import chess

MODE, PIDFILE, DEEP_NODES = {mode!r}, {pidfile!r}, 5000
with open(PIDFILE, "w") as handle:
    handle.write(str(os.getpid()))
board, goes = chess.Board(), 0


def reply(*lines):
    for line in lines:
        sys.stdout.write(line + "\\n")
    sys.stdout.flush()


for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "uci":
        reply("id name FakeFish", "option name Hash type spin default 16 min 1 max 64", "uciok")
    elif words[0] == "isready":
        reply("readyok")
    elif words[0] == "position":
        moves = words.index("moves") if "moves" in words else len(words)
        board = chess.Board() if words[1] == "startpos" else chess.Board(" ".join(words[2:moves]))
        for uci in words[moves + 1:]:
            board.push_uci(uci)
    elif words[0] == "go":
        goes += 1
        if MODE == "crash" and goes > 2:
            os._exit(3)
        if MODE == "hang":
            time.sleep(3600)
        best = next(iter(board.legal_moves)).uci()
        nodes = int(words[words.index("nodes") + 1]) if "nodes" in words else 0
        cp = 12
        if MODE in ("shallow", "steady") and (MODE == "steady" or nodes < DEEP_NODES):
            cp = 0 if board.turn else 400  # every move looks like a blunder at a shallow budget
        elif MODE == "shallow":
            cp = 0  # ... and is sound at a deeper one
        reply(f"info depth 1 seldepth 1 nodes 10 score cp {{cp}} pv {{best}}", f"bestmove {{best}}")
    elif words[0] == "quit":
        break
'''


def write_fake_engine(folder: Path, mode: str) -> tuple[Path, Path]:
    """(the engine's path, the file it writes its pid to); ``mode``: "ok", "crash" (after two
    positions), "hang" (never answers "go"), "shallow" (below 5,000 nodes every move loses four
    pawns, at 5,000 and more none does) or "steady" (every move loses four pawns at any budget)."""
    path, pidfile = folder / f"fakefish-{mode}", folder / f"fakefish-{mode}.pid"
    path.write_text(SCRIPT.format(python=sys.executable, mode=mode, pidfile=str(pidfile)))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path, pidfile


def process_gone(pidfile: Path) -> bool:
    pid = int(pidfile.read_text())
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a zombie (killed, not yet reaped) is gone too
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True
