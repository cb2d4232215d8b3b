"""Positions no generated dataset may contain, and the ``Line`` they are written as.

The value-sanity suite's mate-in-one checks (``analysis.eval.value_sanity``) ask whether a
network *learnt* what a mate in one looks like; ``analysis.data.plan`` drops these positions
(and their mirrors) so no dataset can teach the answers themselves. The position corpus
(``analysis.corpus``) also drops every position of the puzzle sets and test suites the project
evaluates on (``evaluation_boards``), read here from their files because ``analysis.data`` may
not import ``analysis.eval``.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

import chess
import chess.polyglot


@dataclass(frozen=True)
class Line:
    """A position reached from a FEN by UCI moves (its history)."""

    name: str
    moves: str
    fen: str = chess.STARTING_FEN

    def board(self) -> chess.Board:
        board = chess.Board(self.fen)
        for uci in self.moves.split():
            board.push_uci(uci)
        return board


_BACK_RANK = "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"
MATE_IN_ONE = [
    Line("Scholar's mate, White to play Qxf7#", "e2e4 e7e5 f1c4 b8c6 d1h5 g8f6"),
    Line("Fool's mate, Black to play Qh4#", "f2f3 e7e5 g2g4"),
    Line("back rank, White to play Rd8#", "", _BACK_RANK),
    Line("back rank, Black to play Rd1#", "", chess.Board(_BACK_RANK).mirror().fen()),
]


def held_out_keys() -> set[str]:
    """Position keys (``board.epd()``) of ``MATE_IN_ONE`` and their mirrors."""
    boards = [line.board() for line in MATE_IN_ONE]
    return {b.epd() for b in boards} | {b.mirror().epd() for b in boards}


def puzzle_boards(path: Path) -> Iterator[chess.Board]:
    """Every position of every puzzle in a Lichess CSV (``FEN``, ``Moves``): the one before the
    opponent's setup move and each one along the solution, so none of the line is taught."""
    with open(path, encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            board = chess.Board(row["FEN"])
            yield board.copy(stack=False)
            for uci in row["Moves"].split():
                board.push_uci(uci)
                yield board.copy(stack=False)


def suite_boards(path: Path) -> Iterator[chess.Board]:
    """The position of every line of an EPD test suite (STS, WAC, ...): its first four fields, as
    some suites write move counters where EPD has operations."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            fields = line.split()[:4]
            if len(fields) == 4:
                yield chess.Board(" ".join(fields) + " 0 1")


def evaluation_boards(puzzle_files: Iterable[Path], suite_files: Iterable[Path]) -> Iterator[chess.Board]:
    """The value-sanity mates in one, the puzzles' positions and the suites' positions."""
    yield from (line.board() for line in MATE_IN_ONE)
    for path in puzzle_files:
        yield from puzzle_boards(path)
    for path in suite_files:
        yield from suite_boards(path)


def held_out_zobrist(puzzle_files: Iterable[Path], suite_files: Iterable[Path]) -> set[int]:
    """Polyglot Zobrist keys of ``evaluation_boards`` and of their colour mirrors (the same test)."""
    keys: set[int] = set()
    for board in evaluation_boards(puzzle_files, suite_files):
        keys.add(chess.polyglot.zobrist_hash(board))
        keys.add(chess.polyglot.zobrist_hash(board.mirror()))
    return keys
