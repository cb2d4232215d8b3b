"""A board from user input: a FEN and UCI moves played from it, with clear errors.

The CLI commands, the UCI engine and the site all parse positions this way, so
a bad FEN or move gets the same one-line message everywhere.
"""

from __future__ import annotations

from typing import Iterable

import chess

# The FIDE 75-move rule (Laws of Chess 9.6.2) ends a game by itself once 75 moves by each
# side pass without a capture or pawn move, so no game reaches a half-move clock above 150.
# A larger clock in a FEN describes no playable position, and the network (trained on
# clocks up to about 100, fed clock / 100) has never seen one: such FENs are refused.
MAX_HALFMOVE_CLOCK = 150


def board_from_fen(fen: str) -> chess.Board:
    """A board for ``fen``, refusing unparsable and illegal positions (ValueError)."""
    try:
        board = chess.Board(fen)
    except ValueError as exc:
        raise ValueError(f"invalid FEN {fen!r}: {exc}") from None
    check_start_position(board, f"FEN {fen!r}")
    return board


def check_start_position(board: chess.Board, label: str) -> None:
    """Refuse (ValueError naming ``label``) a set-up position no game can reach or the networks can take.

    Shared by FEN input and a PGN's ``[FEN]`` tag, so both give the same message.
    """
    status = board.status()
    if status != chess.STATUS_VALID:
        names = [flag.name.lower().replace("_", " ") for flag in chess.Status if flag and flag in status]
        raise ValueError(f"illegal position in {label}: {', '.join(names) or 'invalid'}")
    if board.halfmove_clock > MAX_HALFMOVE_CLOCK:
        raise ValueError(f"the half-move clock {board.halfmove_clock} in {label} is over {MAX_HALFMOVE_CLOCK}: "
                         f"the 75-move rule ends every game by then")


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
