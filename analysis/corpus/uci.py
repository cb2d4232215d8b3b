"""A bare UCI pipe to Stockfish for the labeller: the commands python-chess's ``analyse`` sends, read lazily.

python-chess parses every ``info`` line into moves checked on a board (about 23 lines a position at
2,000 nodes and 3 lines): most of the build process's own time while it labels (docs/training.md has
the measurement). This pipe sends the same commands in the same order (options once;
then per position ``ucinewgame``, ``isready``, the position with its move history as python-chess
writes it, ``go nodes N``) and keeps, per line number, the last score, WDL and first move, as
python-chess's ``AnalysisResult`` merges them; ``tests/test_corpus.py`` checks that the labels are
the ones python-chess gives, position by position.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass

import chess
import chess.engine


@dataclass
class UciLine:
    """One multipv line's last score (side to move's view), WDL (permille) and first move."""

    score: chess.engine.Score | None = None
    wdl: tuple[int, int, int] | None = None
    move: str | None = None


def position_command(board: chess.Board) -> str:
    """``position ...`` as python-chess sends it: the root position and the moves since, when the
    history holds no null move; the standard start as ``startpos``."""
    safe_history = all(board.move_stack)
    root = board.root() if safe_history else board
    fen = root.fen(shredder=board.chess960, en_passant="fen")
    parts = ["position", "startpos" if fen == chess.STARTING_FEN else f"fen {fen}"]
    if safe_history and board.move_stack:
        parts += ["moves", *(move.uci() for move in board.move_stack)]
    return " ".join(parts)


def parse_info(line: str, lines: dict[int, UciLine]) -> None:
    """Merge one ``info`` line's score, WDL and first pv move into ``lines`` (by multipv number)."""
    tokens = line.split()
    if "score" not in tokens:
        return
    found = lines.setdefault(int(tokens[tokens.index("multipv") + 1]) if "multipv" in tokens else 1, UciLine())
    at = tokens.index("score")
    kind, value = tokens[at + 1], int(tokens[at + 2])
    found.score = chess.engine.Cp(value) if kind == "cp" else chess.engine.Mate(value)
    if "wdl" in tokens:
        at = tokens.index("wdl")
        found.wdl = (int(tokens[at + 1]), int(tokens[at + 2]), int(tokens[at + 3]))
    if "pv" in tokens and tokens.index("pv") + 1 < len(tokens):
        found.move = tokens[tokens.index("pv") + 1]


class UciPipe:
    """A Stockfish process spoken to directly; ``search`` returns its lines best first."""

    def __init__(self, path: str, options: dict[str, object]):
        self.process = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self._send("uci")
        self._read_until("uciok")
        for name, value in options.items():
            value = str(value).lower() if isinstance(value, bool) else value
            self._send(f"setoption name {name} value {value}")

    def search(self, board: chess.Board, nodes: int) -> list[UciLine]:
        """Lines with a move, by multipv number, from a fresh game (``ucinewgame``) at ``nodes``."""
        self._send("ucinewgame")
        self._send("isready")
        self._read_until("readyok")
        self._send(position_command(board))
        self._send(f"go nodes {nodes}")
        lines: dict[int, UciLine] = {}
        for text in self._read_until("bestmove"):
            if text.startswith("info "):
                parse_info(text, lines)
        return [lines[k] for k in sorted(lines) if lines[k].move and lines[k].score is not None]

    def _send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def _read_until(self, prefix: str) -> list[str]:
        assert self.process.stdout is not None
        seen = []
        while True:
            text = self.process.stdout.readline()
            if not text:
                raise chess.engine.EngineTerminatedError(f"Stockfish ended before {prefix!r}")
            seen.append(text.rstrip("\n"))
            if text.startswith(prefix):
                return seen

    def close(self) -> None:
        try:
            self._send("quit")
            self.process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
