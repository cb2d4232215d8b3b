"""The positions a probe is trained and scored on: balanced per concept, with a fixed split and seed.

The pool is every position of the master games in ``../shared/data/pgn`` (after each ply, game
over left out), the puzzles of ``../shared/data/puzzles`` (each after the opponent's setup move,
the position the solver faces, and along its solution) and any given file (a FEN a line, or PGN), deduplicated, shuffled
with the seed. Each concept takes its positions from the front of that order:

- a **binary** concept takes ``positions // 2`` positives and as many negatives (equal classes,
  scanning further into the pool for a rare class); where the pool holds fewer positives, both
  classes shrink to what there is, so the set stays balanced. Each class is split 60/20/20 into
  train, validation and test, so every split has equal classes: the test set's positive share
  (``balance``) is 0.5;
- a **regression** or **square** concept takes the first ``positions`` positions where it is
  defined, split 60/20/20 in the same shuffled order.

The networks run the union of the concepts' positions once.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Sequence

import chess
import chess.pgn
import numpy as np

from analysis.corpus.config import SHARED_DATA
from analysis.probes.concepts import Concept, EngineFacts, engine_facts

SPLIT = (0.6, 0.2, 0.2)  # train, validation, test
MIN_PER_CLASS = 20  # a binary set needs at least this many of each class (>= 4 per split)
TRAIN, VAL, TEST = 0, 1, 2


@dataclass(frozen=True)
class PositionConfig:
    """``positions``: per concept (train + validation + test); ``seed`` fixes the pool's order and split."""

    positions: int = 2000
    seed: int = 0
    data: Path = SHARED_DATA
    extra: Path | None = None  # a file of FENs (one a line) or a PGN, added to the pool


@dataclass
class ConceptSet:
    """One concept's rows: ``index`` into ``ProbeData.boards``, ``labels`` ((n,) or (n, 64) with NaN
    for non-candidate squares) and ``split`` (0 train, 1 validation, 2 test)."""

    concept: Concept
    index: np.ndarray
    labels: np.ndarray
    split: np.ndarray

    def rows(self, part: int) -> np.ndarray:
        return np.flatnonzero(self.split == part)

    @property
    def balance(self) -> float | None:
        """The positive share of the test set (binary concepts; None otherwise)."""
        if self.concept.kind != "binary":
            return None
        return float(self.labels[self.rows(TEST)].mean())


@dataclass
class ProbeData:
    boards: list[chess.Board]
    sets: dict[str, ConceptSet] = field(default_factory=dict)


def game_fens(pgn_dir: Path) -> list[str]:
    """Every position of every game in ``pgn_dir/*.pgn`` after each ply (game over left out)."""
    return list(_game_fens(str(pgn_dir)))


@lru_cache(maxsize=2)
def _game_fens(pgn_dir: str) -> tuple[str, ...]:
    out = []
    for path in sorted(Path(pgn_dir).glob("*.pgn")):
        with path.open(encoding="utf-8", errors="replace") as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                board = game.board()
                for move in game.mainline_moves():
                    board.push(move)
                    if not board.is_game_over():
                        out.append(board.fen())
    return tuple(out)


def puzzle_fens(csv_path: Path) -> list[str]:
    """Each puzzle after the opponent's setup move (its first move), then after each further move
    of its solution but the last (tactical positions: a mate-in-2 line holds a mate in one)."""
    out = []
    with csv_path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            board = chess.Board(row["FEN"])
            for uci in row["Moves"].split()[:-1]:
                board.push_uci(uci)
                out.append(board.fen())
    return out


def file_fens(path: Path) -> list[str]:
    """A file of FENs (one a line, ``#`` comments) or, ending in .pgn, its games' positions."""
    if path.suffix.lower() == ".pgn":
        return list(_game_fens(str(path.parent))) if path.is_dir() else _one_pgn(path)
    fens = [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
    for fen in fens:
        chess.Board(fen)  # ValueError with python-chess's reason
    return fens


def _one_pgn(path: Path) -> list[str]:
    out = []
    with path.open(encoding="utf-8", errors="replace") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            board = game.board()
            for move in game.mainline_moves():
                board.push(move)
                if not board.is_game_over():
                    out.append(board.fen())
    return out


def pool(config: PositionConfig) -> list[str]:
    """The pool's FENs, deduplicated and shuffled with the seed (ValueError when it is empty)."""
    fens: list[str] = []
    if (config.data / "pgn").is_dir():
        fens += game_fens(config.data / "pgn")
    for path in sorted((config.data / "puzzles").glob("*.csv")) if (config.data / "puzzles").is_dir() else []:
        fens += puzzle_fens(path)
    if config.extra is not None:
        fens += file_fens(config.extra)
    fens = list(dict.fromkeys(fens))
    if not fens:
        raise ValueError(f"no positions: {config.data} holds no pgn/ or puzzles/ and no file was given")
    order = np.random.default_rng(config.seed).permutation(len(fens))
    return [fens[i] for i in order]


def build(concepts: Sequence[Concept], config: PositionConfig, fens: Sequence[str] | None = None,
          engine=None) -> ProbeData:
    """Each concept's balanced, split set over ``fens`` (default: ``pool(config)``). ``engine``: a
    running Stockfish for the engine concepts. ValueError when a binary concept cannot have
    ``MIN_PER_CLASS`` of each class."""
    if config.positions < 2 * MIN_PER_CLASS:
        raise ValueError(f"--positions {config.positions} is too small for a balanced set: "
                         f"at least {2 * MIN_PER_CLASS} (then {MIN_PER_CLASS} per class)")
    if any(c.engine for c in concepts) and engine is None:
        raise ValueError("the engine concepts need Stockfish, which is not installed")
    fens = pool(config) if fens is None else list(dict.fromkeys(fens))
    picked = {c.name: ([], []) for c in concepts}  # name -> (fen indices, labels)
    for i, fen in enumerate(fens):
        open_ = [c for c in concepts if _wants(c, picked[c.name], config.positions)]
        if not open_:
            break
        board = chess.Board(fen)
        facts = _facts(engine, board) if any(c.engine for c in open_) else None
        for concept in open_:
            label = concept.label(board, facts)
            if _takes(concept, label, picked[concept.name], config.positions):
                picked[concept.name][0].append(i)
                picked[concept.name][1].append(label)
    used = sorted({i for index, _ in picked.values() for i in index})
    where = {i: row for row, i in enumerate(used)}
    data = ProbeData([chess.Board(fens[i]) for i in used])
    rng = np.random.default_rng(config.seed)
    for concept in concepts:
        index, labels = picked[concept.name]
        data.sets[concept.name] = _split(concept, np.array([where[i] for i in index], dtype=np.int64),
                                         np.array(labels, dtype=np.float32), config.positions, rng)
    return data


def _facts(engine, board: chess.Board) -> EngineFacts | None:
    return engine_facts(engine, board) if board.legal_moves.count() else None


def _wants(concept: Concept, picked, n: int) -> bool:
    labels = picked[1]
    if concept.kind != "binary":
        return len(labels) < n
    positives = sum(1 for v in labels if v == 1)
    return positives < n // 2 or len(labels) - positives < n // 2


def _takes(concept: Concept, label, picked, n: int) -> bool:
    if concept.kind == "square":
        return bool(np.isfinite(label).any())
    if not np.isfinite(label):
        return False
    if concept.kind == "regression":
        return True
    same = sum(1 for v in picked[1] if v == label)
    return same < n // 2


def _split(concept: Concept, index: np.ndarray, labels: np.ndarray, n: int, rng) -> ConceptSet:
    """60/20/20 in the pool's order; a binary concept per class after cutting both to one size."""
    split = np.empty(len(index), dtype=np.int8)
    if concept.kind == "binary":
        classes = [np.flatnonzero(labels == 1), np.flatnonzero(labels == 0)]
        size = min(len(c) for c in classes)
        if size < MIN_PER_CLASS:
            which = "positive" if len(classes[0]) < len(classes[1]) else "negative"
            raise ValueError(f"{concept.name}: the pool holds only {size} {which} positions, too few for a balanced "
                             f"set (at least {MIN_PER_CLASS} per class)")
        keep = np.concatenate([rng.permutation(c)[:size] for c in classes])
        keep.sort()
        index, labels = index[keep], labels[keep]
        split = np.empty(len(index), dtype=np.int8)
        for value in (1, 0):
            rows = rng.permutation(np.flatnonzero(labels == value))
            split[rows] = _parts(len(rows))
    else:
        split[rng.permutation(len(index))] = _parts(len(index))
    return ConceptSet(concept, index, labels, split)


def _parts(n: int) -> np.ndarray:
    """``n`` split labels, 60/20/20, the test part never smaller than the validation part."""
    train = int(round(n * SPLIT[0]))
    val = (n - train) // 2
    return np.array([TRAIN] * train + [VAL] * val + [TEST] * (n - train - val), dtype=np.int8)


def boards_of(fens: Iterable[str]) -> list[chess.Board]:
    return [chess.Board(f) for f in fens]
