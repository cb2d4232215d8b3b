"""Positions mined from master games where the network's own line is confident for three plies.

The look-ahead probe needs more examples than a puzzle set gives, and the paper's real condition
is "positions where the net finds a single best line" (anchors, section 1). Here: a position of
a game where the network's top move has p > 0.5, the top move after it (the opponent's reply) too,
and the top move after that too; the item's ``moves`` are those three moves (UCI, real squares).

Every position is evaluated from its FEN alone (no move history), as the studies prepare clean and
corrupted inputs, so an Lc0/Maia net sees here exactly what a study will show it. Positions are
read in a fixed order (files sorted by name, games and plies in order, a repeated position kept
once) and evaluated in batches, one ply of the line per forward call.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import chess
import chess.pgn

from analysis.studies.errors import StudyInputError
from analysis.studies.positions import SHARED_DATA, Item, PositionSource, register_miner

__all__ = ["MinedPosition", "MiningConfig", "confident_lines", "game_positions", "master_pgns", "mine", "mine_items"]



@dataclass(frozen=True)
class MiningConfig:
    """``threshold``: the top move's least probability at each ply; ``plies``: how long the line is;
    ``limit``: stop after this many positions; ``batch``: positions per forward pass; ``skip``: the
    opening plies of each game left out (book moves say little about the network)."""

    threshold: float = 0.5
    plies: int = 3
    limit: int = 200
    batch: int = 64
    skip: int = 8

    def __post_init__(self):
        if not 0.0 <= self.threshold < 1.0:
            raise ValueError(f"threshold must lie in [0, 1), not {self.threshold}")
        if self.plies < 1 or self.limit < 1 or self.batch < 1 or self.skip < 0:
            raise ValueError("plies, limit and batch must be at least 1 and skip at least 0")


@dataclass(frozen=True)
class MinedPosition:
    """One mined position: ``id`` is "<file stem>:<game from 0>:<ply from 0>"; ``probs`` the network's
    probability of each move of ``moves`` where it was played."""

    id: str
    fen: str
    moves: tuple[str, ...]
    probs: tuple[float, ...]


def master_pgns(root: Path | None = None) -> list[Path]:
    """The master-game PGN files under ``../shared/data/pgn`` (or ``root``), sorted by name."""
    folder = (root or SHARED_DATA) / "pgn"
    paths = sorted(folder.glob("*.pgn"))
    if not paths:
        raise FileNotFoundError(f"no PGN files under {folder}")
    return paths


def game_positions(paths: Sequence[Path], skip: int = 8) -> Iterator[tuple[str, str]]:
    """(id, FEN) of every position of every game's main line from ply ``skip`` on, each position
    (pieces, side, castling, en passant) once, in file, game and ply order."""
    seen: set[str] = set()
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as handle:
            number = 0
            while (game := chess.pgn.read_game(handle)) is not None:
                board = game.board()
                for ply, move in enumerate(game.mainline_moves()):
                    key = board.epd()
                    if ply >= skip and key not in seen:
                        seen.add(key)
                        yield f"{path.stem}:{number}:{ply}", board.fen()
                    board.push(move)
                number += 1


def confident_lines(evaluator, fens: Sequence[str], config: MiningConfig) -> list[tuple[tuple[str, ...], tuple[float, ...]] | None]:
    """For each FEN, the network's own line of ``config.plies`` top moves with their probabilities, or
    None where some top move has p <= threshold (or the game ends first). One batched pass per ply."""
    boards = [chess.Board(fen) for fen in fens]
    lines: list[list[tuple[str, float]] | None] = [[] for _ in fens]
    for _ in range(config.plies):
        alive = [i for i, line in enumerate(lines) if line is not None and any(boards[i].legal_moves)]
        for i, line in enumerate(lines):
            if line is not None and i not in alive:
                lines[i] = None
        evaluations = evaluator.evaluate([chess.Board(boards[i].fen()) for i in alive]) if alive else []
        for i, evaluation in zip(alive, evaluations):
            move = evaluation.best_move()
            p = evaluation.policy[move] if move is not None else 0.0
            if move is None or p <= config.threshold:
                lines[i] = None
                continue
            lines[i].append((move.uci(), float(p)))
            boards[i].push(move)
    return [None if line is None else (tuple(m for m, _ in line), tuple(p for _, p in line)) for line in lines]


def mine(evaluator, positions: Iterable[tuple[str, str]], config: MiningConfig = MiningConfig()) -> list[MinedPosition]:
    """The first ``config.limit`` of ``positions`` ((id, FEN), e.g. ``game_positions``) whose network
    line is confident for ``config.plies`` plies, in their given order."""
    if not evaluator.capabilities.policy:
        raise ValueError(f"{evaluator.name} has no policy, so it has no line of its own to mine")
    out: list[MinedPosition] = []
    chunk: list[tuple[str, str]] = []
    for entry in positions:
        chunk.append(entry)
        if len(chunk) == config.batch:
            out += _mine_chunk(evaluator, chunk, config)
            chunk = []
            if len(out) >= config.limit:
                return out[: config.limit]
    if chunk:
        out += _mine_chunk(evaluator, chunk, config)
    return out[: config.limit]


def _mine_chunk(evaluator, chunk: list[tuple[str, str]], config: MiningConfig) -> list[MinedPosition]:
    lines = confident_lines(evaluator, [fen for _, fen in chunk], config)
    return [MinedPosition(id=key, fen=fen, moves=line[0], probs=line[1])
            for (key, fen), line in zip(chunk, lines) if line is not None]


def mine_items(source: PositionSource, context) -> list[Item]:
    """The ``games`` position kind inside a study: the study network's confident lines in the master
    games (or in ``source.path``, a PGN file or a folder of them), ``source.limit`` of them (default 200)."""
    path = Path(source.path) if source.path else None
    try:
        paths = sorted(path.glob("*.pgn")) if path is not None and path.is_dir() else [path] if path else master_pgns()
    except FileNotFoundError as exc:
        raise StudyInputError(str(exc)) from None
    if not paths or not all(p.is_file() for p in paths):
        raise StudyInputError(f"no PGN file at {source.path}")
    config = MiningConfig(limit=source.limit or MiningConfig.limit)
    try:
        mined = mine(context.evaluator, game_positions(paths, config.skip), config)
    except ValueError as exc:
        raise StudyInputError(str(exc)) from None
    return [Item(index=i, id=m.id, fen=m.fen, moves=m.moves, meta={"source": "games", "probs": list(m.probs)})
            for i, m in enumerate(mined)]


register_miner("games", mine_items)
