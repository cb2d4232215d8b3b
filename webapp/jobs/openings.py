"""The game's opening by name, from lichess's chess-openings tables (``SIGHTLINE_OPENINGS_DIR``,
``../shared/data/openings/*.tsv``: eco, name, pgn). No maintained package on PyPI ships those names,
so the site reads the tables where they are and names no opening where they are not."""

from __future__ import annotations

import csv
from functools import lru_cache
from pathlib import Path

import chess
from django.conf import settings


@lru_cache(maxsize=4)
def opening_names(folder: str) -> dict[tuple[str, ...], str]:
    """Every table line (its moves in SAN, from the start) -> "ECO Name"; empty without tables.
    Matched by moves, not replayed positions: reading the tables stays a few milliseconds."""
    names: dict[tuple[str, ...], str] = {}
    for table in sorted(Path(folder).glob("*.tsv")):
        with table.open(newline="", encoding="utf-8") as rows:
            for row in csv.DictReader(rows, delimiter="\t"):
                moves = tuple(token for token in (row.get("pgn") or "").split() if not token.endswith("."))
                if moves and row.get("eco") and row.get("name"):
                    names[moves] = f"{row['eco']} {row['name']}"
    return names


def game_opening(start_fen: str, nodes: list[dict]) -> str | None:
    """The name of the longest table line the game's main line starts with, or None (a set-up
    position, a game off the tables from its first move)."""
    if start_fen != chess.STARTING_FEN:
        return None
    names = opening_names(str(settings.SIGHTLINE_OPENINGS_DIR))
    line = [n["san"] for n in sorted((n for n in nodes if n.get("main") and n.get("san")), key=lambda n: n["ply"])]
    found = None
    for length in range(1, len(line) + 1):
        found = names.get(tuple(line[:length]), found)
    return found
