"""Position sets a study runs over: ``PositionSource`` -> ``read_positions`` -> ``Item`` list.

Kinds: a shipped puzzle set by name (``puzzles``), a Lichess puzzle CSV (``csv``, path or text), a
PGN (``pgn``: every position of its games), a FEN list (``fens``: one a line), and positions mined
from master games (``games``: needs a network, so a miner registered with ``register_miner`` does
it inside ``run_study``). Items are numbered from 0 in the order the source lists them, so a study's
item index names the same position in every run. Bad input is a ``StudyInputError`` of one line.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import chess
import chess.pgn

from analysis.positions import board_from_fen
from analysis.studies.errors import StudyInputError

KINDS = ("puzzles", "csv", "pgn", "fens", "games")
CSV_COLUMNS = ("PuzzleId", "FEN", "Moves")
# A PGN position's line: the game's next moves from it, at most this many plies.
PGN_LINE_PLIES = 12
# Where the shipped puzzle sets live: ../shared/data/puzzles beside the checkout (tests/conftest.py's rule).
SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


@dataclass(frozen=True)
class PositionSource:
    """Where a study's positions come from; ``limit`` keeps the first N items."""

    kind: str
    path: str | None = None
    text: str | None = None
    limit: int | None = None

    def to_json(self) -> dict:
        return {"kind": self.kind, "path": self.path, "text": self.text, "limit": self.limit}

    @classmethod
    def from_json(cls, data: dict) -> "PositionSource":
        return cls(data["kind"], data.get("path"), data.get("text"), data.get("limit"))


@dataclass(frozen=True)
class Item:
    """One position of a study: ``moves`` is the UCI line after ``fen`` (a puzzle's solution, its
    setup move already applied), ``meta`` what the source says besides (rating, themes, game)."""

    index: int
    id: str
    fen: str
    moves: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)

    def board(self) -> chess.Board:
        """The position from its FEN alone (no move history: clean and corrupted inputs alike)."""
        return chess.Board(self.fen)


# A miner: (source, context) -> items; registered by the module that mines (``games``).
_MINERS: dict[str, Callable[..., list[Item]]] = {}


def register_miner(kind: str, miner: Callable[..., list[Item]]) -> None:
    """Lets a position kind that needs the study's network (``games``) be read inside ``run_study``."""
    _MINERS[kind] = miner


def miner_for(kind: str) -> Callable[..., list[Item]] | None:
    return _MINERS.get(kind)


def shipped_puzzle_sets() -> list[str]:
    """The shipped puzzle sets' names (the CSVs under ../shared/data/puzzles)."""
    folder = SHARED_DATA / "puzzles"
    return sorted(p.stem for p in folder.glob("*.csv")) if folder.is_dir() else []


def read_positions(source: PositionSource) -> list[Item]:
    """The source's items numbered from 0 (StudyInputError on bad input or an empty set)."""
    if source.kind not in KINDS:
        raise StudyInputError(f"unknown position kind {source.kind!r}: one of {', '.join(KINDS)}")
    if source.limit is not None and (isinstance(source.limit, bool) or not isinstance(source.limit, int)
                                     or source.limit < 1):
        raise StudyInputError(f"limit must be a whole number from 1, not {source.limit!r}")
    if source.kind == "games":
        raise StudyInputError("positions mined from games need the study's network: run them in a study")
    reader = {"puzzles": _puzzle_set, "csv": _csv, "pgn": _pgn, "fens": _fens}[source.kind]
    items = reader(source)
    if not items:
        raise StudyInputError(f"the {source.kind} position set is empty")
    return items


def _text(source: PositionSource) -> tuple[str, str]:
    """(the source's text, a label for messages): ``text`` as given, else the file at ``path``."""
    if source.text is not None:
        if source.path is not None:
            raise StudyInputError("give a position set's path or its text, not both")
        return source.text, source.kind
    if source.path is None:
        raise StudyInputError(f"a {source.kind} position set needs a path or a text")
    try:
        return Path(source.path).read_text(encoding="utf-8"), source.path
    except (OSError, UnicodeDecodeError) as exc:
        raise StudyInputError(f"cannot read {source.path}: {exc.__class__.__name__}") from None


def _puzzle_set(source: PositionSource) -> list[Item]:
    name = source.path or source.text or ""
    if name not in shipped_puzzle_sets():
        known = ", ".join(shipped_puzzle_sets()) or "none here"
        raise StudyInputError(f"unknown puzzle set {name!r} (shipped: {known})")
    path = SHARED_DATA / "puzzles" / f"{name}.csv"
    return _csv(PositionSource("csv", path=str(path), limit=source.limit))


def _csv(source: PositionSource) -> list[Item]:
    """A Lichess puzzle CSV: FEN is before the opponent's setup move ``Moves[0]``; the item is the
    position after it, with the solution line ``Moves[1:]``."""
    text, label = _text(source)
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise StudyInputError(f"{label}: a Lichess puzzle CSV needs the column(s) {', '.join(missing)}")
    items: list[Item] = []
    for line, row in enumerate(reader, start=2):
        moves = (row["Moves"] or "").split()
        try:
            board = board_from_fen(row["FEN"] or "")
            setup = board.parse_uci(moves[0]) if moves else None
            if setup is None or len(moves) < 2:
                raise ValueError("a puzzle needs a setup move and a solution")
            board.push(setup)
            fen = board.fen()
            for uci in moves[1:]:
                board.push(board.parse_uci(uci))
        except (ValueError, IndexError) as exc:
            raise StudyInputError(f"{label}: line {line}: puzzle {row.get('PuzzleId')!r}: {exc}") from None
        meta = {"rating": _int(row.get("Rating")), "themes": (row.get("Themes") or "").split(),
                "setup": moves[0], "source_fen": row["FEN"]}
        items.append(Item(len(items), row["PuzzleId"], fen, tuple(moves[1:]), meta))
        if source.limit is not None and len(items) >= source.limit:
            break
    return items


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text else None
    except ValueError:
        return None


def _pgn(source: PositionSource) -> list[Item]:
    """Every position of every game, each with the game's next moves (up to PGN_LINE_PLIES)."""
    text, label = _text(source)
    handle, items, number = io.StringIO(text), [], 0
    while source.limit is None or len(items) < source.limit:
        game = chess.pgn.read_game(handle)
        if game is None:
            break
        number += 1
        if game.errors:
            raise StudyInputError(f"{label}: game {number}: {game.errors[0]}")
        board = game.board()
        line = [m.uci() for m in game.mainline_moves()]
        for ply, move in enumerate(game.mainline_moves()):
            items.append(Item(len(items), f"g{number}p{ply}", board.fen(), tuple(line[ply:ply + PGN_LINE_PLIES]),
                              {"game": number, "ply": ply, "white": game.headers.get("White"),
                               "black": game.headers.get("Black")}))
            board.push(move)
            if source.limit is not None and len(items) >= source.limit:
                break
    return items


def _fens(source: PositionSource) -> list[Item]:
    """One FEN a line; blank lines and lines starting with # are skipped (numbers name file lines)."""
    text, label = _text(source)
    items = []
    for line, raw in enumerate(text.splitlines(), start=1):
        fen = raw.strip()
        if not fen or fen.startswith("#"):
            continue
        try:
            board = board_from_fen(fen)
        except ValueError as exc:
            raise StudyInputError(f"{label}: line {line}: {exc}") from None
        items.append(Item(len(items), f"line{line}", board.fen(), (), {"line": line}))
        if source.limit is not None and len(items) >= source.limit:
            break
    return items
