"""A board from user input: a FEN and UCI moves played from it, with clear errors.

The CLI commands, the UCI engine and the site all parse positions this way, so
a bad FEN or move gets the same one-line message everywhere.
"""

from __future__ import annotations

from typing import Iterable

import chess


def board_from_fen(fen: str) -> chess.Board:
    """A board for ``fen``, refusing unparsable and illegal positions (ValueError)."""
    try:
        board = chess.Board(fen)
    except ValueError as exc:
        raise ValueError(f"invalid FEN {fen!r}: {exc}") from None
    status = board.status()
    if status != chess.STATUS_VALID:
        names = [flag.name.lower().replace("_", " ") for flag in chess.Status if flag and flag in status]
        raise ValueError(f"illegal position in FEN {fen!r}: {', '.join(names) or 'invalid'}")
    return board


def play_uci(board: chess.Board, moves: Iterable[str]) -> chess.Board:
    """Play UCI ``moves`` on a copy of ``board``; ValueError names the first bad one by number."""
    board = board.copy()
    for ply, text in enumerate(moves, start=1):
        try:
            move = chess.Move.from_uci(text)
        except ValueError:
            raise ValueError(f"move {ply} {text!r} is not UCI notation (e.g. e2e4, e7e8q)") from None
        if not board.is_legal(move):
            raise ValueError(f"move {ply} {text!r} is illegal in {board.fen()}")
        board.push(move)
    return board


def board_from_input(fen: str, moves: Iterable[str] = ()) -> chess.Board:
    return play_uci(board_from_fen(fen), moves)
