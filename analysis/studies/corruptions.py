"""Minimal corruptions of a puzzle's board, as the look-ahead paper makes them (Jenner et al. 2024,
``scripts/make_corruptions.py``): every board one small edit away, that stays a legal position and
keeps the puzzle's first move legal. Which of them is kept is the puzzle set's business
(``analysis.studies.lookahead_set``: the networks decide).

Edits: add a pawn of either colour on an empty square of ranks 2 to 7; remove a pawn; move one piece
that is neither a pawn nor a king to an empty square. The board keeps its side to move, castling
rights, en-passant square and clocks; an edit that makes any of them wrong (python-chess's
``is_valid()``: a rook moved off its castling square, the side not to move in check, ...) is
dropped, not repaired, so the corrupted FEN differs from the clean one on the board alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import chess


@dataclass(frozen=True)
class Corruption:
    """One corrupted board: its FEN, the edit in words, the real squares whose piece changed."""

    fen: str
    edit: str
    squares: tuple[int, ...]


def changed_squares(a: chess.Board, b: chess.Board) -> tuple[int, ...]:
    """The real squares (a1 = 0) whose piece differs between ``a`` and ``b``."""
    return tuple(s for s in chess.SQUARES if a.piece_at(s) != b.piece_at(s))


def _edits(board: chess.Board):
    """(edit in words, edited board) for every single edit, in a fixed order."""
    empty = [s for s in chess.SQUARES if board.piece_at(s) is None]
    for square in empty:
        if 1 <= chess.square_rank(square) <= 6:
            for colour in (chess.WHITE, chess.BLACK):
                edited = board.copy(stack=False)
                edited.set_piece_at(square, chess.Piece(chess.PAWN, colour))
                yield f"add {'white' if colour else 'black'} pawn {chess.square_name(square)}", edited
    for square, piece in sorted(board.piece_map().items()):
        if piece.piece_type == chess.PAWN:
            edited = board.copy(stack=False)
            edited.remove_piece_at(square)
            yield f"remove pawn {chess.square_name(square)}", edited
        elif piece.piece_type != chess.KING:
            for target in empty:
                edited = board.copy(stack=False)
                edited.remove_piece_at(square)
                edited.set_piece_at(target, piece)
                yield f"move {piece.symbol()} {chess.square_name(square)}-{chess.square_name(target)}", edited


def corruptions(board: chess.Board, first: chess.Move) -> list[Corruption]:
    """Every legal single-edit board on which ``first`` is still legal, without repeats."""
    seen, out = set(), []
    for edit, edited in _edits(board):
        if not edited.is_valid() or not edited.is_legal(first):
            continue
        fen = edited.fen()
        if fen not in seen:
            seen.add(fen)
            out.append(Corruption(fen, edit, changed_squares(board, edited)))
    return out
