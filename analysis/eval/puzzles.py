"""Lichess puzzles, scored by the ChessBench rule.

CSV columns ``PuzzleId,FEN,Moves,Rating,...``: FEN is the position before the
opponent's setup move ``Moves[0]``; the solver must play ``Moves[1]``,
``Moves[3]``, ... while the opponent's replies are forced. A puzzle is solved
only if every solver move matches, except that any move that checkmates is
accepted (Lichess accepts alternative mates too; ChessBench's puzzles.py).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import chess

BUCKET = 400


@dataclass(frozen=True)
class Puzzle:
    puzzle_id: str
    fen: str
    moves: tuple[str, ...]
    rating: int


def load_puzzles(path: Path, limit: int | None = None) -> list[Puzzle]:
    """Read and validate a Lichess puzzle CSV; raises ValueError naming the bad row."""
    puzzles = []
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = {"PuzzleId", "FEN", "Moves", "Rating"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
        for line, row in enumerate(reader, start=2):
            moves = tuple(row["Moves"].split())
            try:
                board = chess.Board(row["FEN"])
                for uci in moves:
                    board.push_uci(uci)
                rating = int(row["Rating"])
            except ValueError as exc:
                raise ValueError(f"{path}:{line}: bad puzzle {row.get('PuzzleId')!r}: {exc}") from None
            if len(moves) < 2:
                raise ValueError(f"{path}:{line}: puzzle {row['PuzzleId']!r} has no solver move")
            puzzles.append(Puzzle(row["PuzzleId"], row["FEN"], moves, rating))
            if limit is not None and len(puzzles) >= limit:
                break
    return puzzles


def solve(puzzle: Puzzle, choose: Callable[[chess.Board], chess.Move]) -> bool:
    """Play the puzzle with ``choose`` as the solver; the ChessBench rule decides."""
    board = chess.Board(puzzle.fen)
    for i, uci in enumerate(puzzle.moves):
        expected = chess.Move.from_uci(uci)
        if i % 2 == 0:
            board.push(expected)
            continue
        move = choose(board)
        if move != expected:
            board.push(move)
            return board.is_checkmate()
        board.push(move)
    return True


@dataclass
class PuzzleReport:
    solved: int = 0
    total: int = 0
    buckets: dict[str, list[int]] = field(default_factory=dict)  # "800-1199" -> [solved, total]
    results: list[tuple[str, int, bool]] = field(default_factory=list)

    def add(self, puzzle: Puzzle, ok: bool) -> None:
        lo = puzzle.rating // BUCKET * BUCKET
        key = f"{lo}-{lo + BUCKET - 1}"
        entry = self.buckets.setdefault(key, [0, 0])
        entry[0] += int(ok)
        entry[1] += 1
        self.solved += int(ok)
        self.total += 1
        self.results.append((puzzle.puzzle_id, puzzle.rating, ok))

    @property
    def accuracy(self) -> float:
        return self.solved / self.total if self.total else 0.0

    def to_json(self) -> dict:
        return {
            "accuracy": round(self.accuracy, 4), "solved": self.solved, "total": self.total,
            "buckets": {k: {"accuracy": round(s / n, 4), "solved": s, "total": n}
                        for k, (s, n) in sorted(self.buckets.items(), key=lambda kv: int(kv[0].split("-")[0]))},
        }


def run_puzzles(puzzles: list[Puzzle], choose: Callable[[chess.Board], chess.Move], *,
                progress: bool = False) -> PuzzleReport:
    from tqdm import tqdm

    report = PuzzleReport()
    for puzzle in tqdm(puzzles, desc="puzzles", unit="puzzle", disable=not progress):
        report.add(puzzle, solve(puzzle, choose))
    return report
