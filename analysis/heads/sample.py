"""The fixed position sample the head atlas is scored on.

``positions.fen`` ships with the code, so every atlas (here, in CI, on the site) is computed on
the same 256 positions and atlases of different networks compare. It was built once from
``../shared/data`` by ``python -m analysis.heads.sample --shared ../shared/data`` and is checked
against that rebuild in the tests whenever the shared data is present:

- 128 master-game positions: from every 7th game of ``pgn/*.pgn`` (files in name order), the
  positions after plies 15, 36 and 57 (black, white, black to move) where the game lasts that long, until 128 are taken
  (openings, middlegames and early endgames, both sides to move);
- 128 puzzle positions: the first 128 rows of ``puzzles/lichess_puzzles_1000.csv``, each after
  the opponent's setup move (the position the solver faces: tactics, pins, open lines).
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path
from typing import Iterator

import chess
import chess.pgn

SAMPLE_PATH = Path(__file__).with_name("positions.fen")
SAMPLE_SIZE = 256
GAME_STRIDE = 7
GAME_PLIES = (15, 36, 57)


def load_sample(limit: int | None = None) -> list[chess.Board]:
    """The first ``limit`` (default all 256) positions of the shipped sample, in file order."""
    if limit is not None and not 1 <= limit <= SAMPLE_SIZE:
        raise ValueError(f"the sample has {SAMPLE_SIZE} positions: ask for 1 to {SAMPLE_SIZE}")
    fens = [line.strip() for line in SAMPLE_PATH.read_text().splitlines() if line.strip() and not line.startswith("#")]
    # Interleave the two halves so that any prefix mixes games and puzzles.
    games, puzzles = fens[:SAMPLE_SIZE // 2], fens[SAMPLE_SIZE // 2:]
    mixed = [fen for pair in zip(games, puzzles) for fen in pair]
    return [chess.Board(fen) for fen in mixed[:limit]]


def game_positions(pgn_dir: Path, count: int) -> list[str]:
    """``count`` FENs from the master games (see the module docstring)."""
    out: list[str] = []
    for index, game in enumerate(_games(pgn_dir)):
        if index % GAME_STRIDE:
            continue
        board = game.board()
        for ply, move in enumerate(game.mainline_moves(), start=1):
            board.push(move)
            if ply in GAME_PLIES and not board.is_game_over():
                out.append(board.fen())
                if len(out) == count:
                    return out
    raise ValueError(f"{pgn_dir} holds too few games for {count} positions")


def _games(pgn_dir: Path) -> Iterator[chess.pgn.Game]:
    for path in sorted(pgn_dir.glob("*.pgn")):
        with path.open(encoding="utf-8", errors="replace") as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                yield game


def puzzle_positions(csv_path: Path, count: int) -> list[str]:
    """``count`` FENs: the first puzzles, after the setup move."""
    out = []
    with csv_path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            board = chess.Board(row["FEN"])
            board.push_uci(row["Moves"].split()[0])
            out.append(board.fen())
            if len(out) == count:
                return out
    raise ValueError(f"{csv_path} holds fewer than {count} puzzles")


def build_sample(shared: Path) -> list[str]:
    half = SAMPLE_SIZE // 2
    return game_positions(shared / "pgn", half) + puzzle_positions(shared / "puzzles" / "lichess_puzzles_1000.csv", half)


def sample_text(fens: list[str]) -> str:
    header = "# The head atlas's position sample (analysis/heads/sample.py says how it was built).\n"
    return header + "".join(f"{fen}\n" for fen in fens)


def main() -> None:
    parser = argparse.ArgumentParser(description="rebuild analysis/heads/positions.fen from the shared data")
    parser.add_argument("--shared", type=Path, default=Path("../shared/data"))
    SAMPLE_PATH.write_text(sample_text(build_sample(parser.parse_args().shared)))


if __name__ == "__main__":
    main()
