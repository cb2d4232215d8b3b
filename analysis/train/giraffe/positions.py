"""Training positions (section 4.3): positions of real games, each with one random legal move applied."""

from __future__ import annotations

import random
from pathlib import Path

import chess

from analysis.data.sources import perturb, pgn_positions
from analysis.train.giraffe.config import PositionsConfig


def _pgn_files(entries: list) -> list[Path]:
    files: list[Path] = []
    for entry in entries:
        path = Path(entry)
        if path.is_dir():
            files += sorted(path.glob("*.pgn"))
        elif path.is_file():
            files.append(path)
        else:
            raise ValueError(f"no PGN file or folder at {path}")
    if not files:
        raise ValueError(f"no .pgn files in {', '.join(map(str, entries))}")
    return files


def load_game_positions(config: PositionsConfig) -> list[str]:
    """FENs of every non-terminal position of the games (capped at ``max_positions``)."""
    fens = []
    for _, board in pgn_positions(_pgn_files(config.pgn), min_ply=config.min_ply):
        fens.append(board.fen())
        if config.max_positions is not None and len(fens) >= config.max_positions:
            break
    if not fens:
        raise ValueError("the PGN files hold no usable positions")
    return fens


def sample_roots(fens: list[str], count: int, rng: random.Random) -> list[chess.Board]:
    """``count`` positions, each a random game position with one random legal move applied."""
    roots: list[chess.Board] = []
    while len(roots) < count:
        board = chess.Board(rng.choice(fens))
        source = perturb(board, rng, "giraffe")
        if source is not None:
            roots.append(chess.Board(source.fen))
    return roots
