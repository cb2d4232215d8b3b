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
# Games run to a few hundred moves at most (the 75-move rule and the material running out end them);
# a move number in the thousands is a typing slip, and 10**30 an attack on whatever stores it.
MAX_FULLMOVE_NUMBER = 10_000
# A FEN echoed in a message is cut here: a refused one may be as long as the body that brought it.
SHOWN_FEN_CHARS = 100


def shown(fen: str) -> str:
    """``fen`` quoted for a message, cut to ``SHOWN_FEN_CHARS``."""
    return repr(fen) if len(fen) <= SHOWN_FEN_CHARS else repr(fen[:SHOWN_FEN_CHARS]) + "..."


def board_from_fen(fen: str) -> chess.Board:
    """A board for ``fen``, refusing unparsable and illegal positions (ValueError).

    The one FEN checker: the home form, the API, the lens's FEN lists, the CLI and the UCI engine
    all read a user's FEN here, so each refuses the same positions with the same words."""
    label = f"FEN {shown(fen)}"
    try:
        board = chess.Board(fen)
    except ValueError as exc:
        raise ValueError(f"invalid {label}: {_short(exc)}") from None
    if _written_fullmove(fen) == "0":  # python-chess reads a move number of 0 as 1
        raise ValueError(f"the move number 0 in {label} is not a move number: moves count from 1")
    check_start_position(board, label)
    return board


def _written_fullmove(fen: str) -> str | None:
    fields = fen.split()
    return fields[5].lstrip("0") or "0" if len(fields) > 5 and fields[5].isdigit() else None


def _short(exc: ValueError) -> str:
    """python-chess's reason without the FEN it repeats at its end."""
    return str(exc).split(": '", 1)[0]


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
    if board.fullmove_number > MAX_FULLMOVE_NUMBER:
        raise ValueError(f"the move number {_number(board.fullmove_number)} in {label} is over "
                         f"{MAX_FULLMOVE_NUMBER:,}: no game lasts that long")


def _number(value: int) -> str:
    """A number for a message: as written, or its length where it would flood the message."""
    digits = len(str(value))
    return f"{value:,}" if digits <= 15 else f"of {digits:,} digits"


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
