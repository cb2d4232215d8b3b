"""Boards and opening lines of each variant in ``analysis.variants``: "chess" (8x8) and "gardner" (5x5)."""

from __future__ import annotations

import chess

from analysis.gardner.board import GardnerBoard
from analysis.variants import VARIANTS


def variant_board(variant: str, fen: str | None = None) -> chess.Board:
    """The start position (or ``fen``) of ``variant``."""
    if variant == "gardner":
        return GardnerBoard(fen) if fen else GardnerBoard()
    if variant == "chess":
        return chess.Board(fen) if fen else chess.Board()
    raise ValueError(f"unknown variant {variant!r}: one of {', '.join(VARIANTS)}")


def opening_lines(variant: str, plies: int) -> list[list[chess.Move]]:
    """Every legal line of ``plies`` moves from the start: Gardner chess has no opening book, so a
    match samples these instead, as an 8x8 match samples ECO lines."""
    board = variant_board(variant)

    def grow(depth: int) -> list[list[chess.Move]]:
        if depth == 0:
            return [[]]
        lines = []
        for move in list(board.legal_moves):
            board.push(move)
            lines += [[move, *rest] for rest in grow(depth - 1)]
            board.pop()
        return lines

    return grow(plies)
