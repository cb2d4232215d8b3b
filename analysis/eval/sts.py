"""Strategic Test Suite: each position awards 0-10 points for the move played.

The EPD's ``c9`` holds the scored moves in UCI and ``c8`` their points (best
= 10); any other move scores 0. 15 themes x 100 positions: 15,000 points.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import chess

MAX_POINTS = 10


@dataclass(frozen=True)
class StsPosition:
    board_fen: str
    theme: str
    points: dict[str, int]  # UCI -> points
    position_id: str


def load_sts(path: Path, limit: int | None = None) -> list[StsPosition]:
    positions = []
    with open(path, encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            line = line.strip()
            if not line:
                continue
            try:
                board, ops = chess.Board.from_epd(line)
            except ValueError as exc:
                raise ValueError(f"{path}:{line_no}: bad EPD: {exc}") from None
            if "c8" not in ops or "c9" not in ops:
                raise ValueError(f"{path}:{line_no}: missing c8/c9 (points/moves)")
            moves, pts = str(ops["c9"]).split(), str(ops["c8"]).split()
            if len(moves) != len(pts):
                raise ValueError(f"{path}:{line_no}: c8 and c9 differ in length")
            ident = str(ops.get("id", f"line {line_no}"))
            match = re.match(r"STS\([^)]*\)\s*(.*?)\.\d+$", ident)
            theme = match.group(1) if match else ident
            positions.append(StsPosition(board.fen(), theme, {m: int(p) for m, p in zip(moves, pts)}, ident))
            if limit is not None and len(positions) >= limit:
                break
    return positions


@dataclass
class StsReport:
    score: int = 0
    maximum: int = 0
    themes: dict[str, list[int]] = field(default_factory=dict)  # theme -> [points, max]

    def add(self, position: StsPosition, move: chess.Move) -> int:
        points = position.points.get(move.uci(), 0)
        entry = self.themes.setdefault(position.theme, [0, 0])
        entry[0] += points
        entry[1] += MAX_POINTS
        self.score += points
        self.maximum += MAX_POINTS
        return points

    def to_json(self) -> dict:
        # A subset's score scaled to the full suite's 15,000 points, to set beside published figures.
        return {"score": self.score, "maximum": self.maximum, "positions": self.maximum // MAX_POINTS,
                "per_15000": round(15000 * self.score / self.maximum) if self.maximum else 0,
                "percent": round(100 * self.score / self.maximum, 2) if self.maximum else 0.0,
                "themes": {t: {"score": s, "maximum": m} for t, (s, m) in self.themes.items()}}


def run_sts(positions: list[StsPosition], choose: Callable[[chess.Board], chess.Move], *,
            progress: bool = False) -> StsReport:
    from tqdm import tqdm

    report = StsReport()
    for position in tqdm(positions, desc="STS", unit="pos", disable=not progress):
        report.add(position, choose(chess.Board(position.board_fen)))
    return report
