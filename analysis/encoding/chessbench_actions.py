"""ChessBench's 1968-action vocabulary (Ruoss et al.; reference ``src/utils.py``).

The table is generated, not sorted: for each from-square a1 ... h8 (python-chess
order) the squares a queen attacks on an empty board, ascending, then the squares
a knight attacks, ascending (1792 moves, castling as the king's two-square move);
then 176 promotions, black's (rank 2 -> 1) before white's (7 -> 8), per file a
straight push, a capture to the left, a capture to the right, each to q, r, b, n.

The paper (appendix A.1) says the 1968 actions are "sorted alphanumerically"; the
released code and its checkpoints use this generated order, which the research
notes verified (anchors in tests/test_chessbench_encoding.py). We follow the code
here, since a network's action tokens must mean what its weights learnt.
"""

from __future__ import annotations

from functools import lru_cache

import chess
import numpy as np

NUM_ACTIONS = 1968
_PROMOTIONS = "qrbn"


@lru_cache(maxsize=None)
def actions() -> tuple[str, ...]:
    """Action index -> UCI move."""
    moves: list[str] = []
    for square in chess.SQUARES:
        targets: list[int] = []
        for symbol in ("Q", "N"):
            board = chess.BaseBoard.empty()
            board.set_piece_at(square, chess.Piece.from_symbol(symbol))
            targets += list(board.attacks(square))
        moves += [chess.square_name(square) + chess.square_name(t) for t in targets]
    for rank, last in (("2", "1"), ("7", "8")):
        for index, file in enumerate("abcdefgh"):
            to_files = [file] + (["abcdefgh"[index - 1]] if index > 0 else []) + \
                       (["abcdefgh"[index + 1]] if index < 7 else [])
            for to_file in to_files:
                moves += [f"{file}{rank}{to_file}{last}{piece}" for piece in _PROMOTIONS]
    assert len(moves) == NUM_ACTIONS, len(moves)
    return tuple(moves)


@lru_cache(maxsize=None)
def _index_of() -> dict[str, int]:
    return {uci: i for i, uci in enumerate(actions())}


def move_to_action(move: chess.Move) -> int:
    """The action index of ``move`` (ValueError for a move outside the table, e.g. a Chess960 castle)."""
    try:
        return _index_of()[move.uci()]
    except KeyError:
        raise ValueError(f"{move.uci()} is not one of ChessBench's {NUM_ACTIONS} actions") from None


def action_to_move(index: int) -> chess.Move:
    if not 0 <= index < NUM_ACTIONS:
        raise ValueError(f"action {index} is outside 0..{NUM_ACTIONS - 1}")
    return chess.Move.from_uci(actions()[index])


def legal_actions(board: chess.Board) -> tuple[list[chess.Move], np.ndarray]:
    """Legal moves in ascending action index (the reference's order: ties go to the lowest) and their indices."""
    index_of = _index_of()
    pairs = sorted((index_of[m.uci()], m) for m in board.legal_moves)
    return [m for _, m in pairs], np.fromiter((i for i, _ in pairs), np.int64, count=len(pairs))


def vocabulary_uci() -> list[str]:
    return list(actions())


