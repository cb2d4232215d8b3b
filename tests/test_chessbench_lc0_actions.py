"""The array conversion of stored lc0 indices to ChessBench actions equals the per-board one."""

from __future__ import annotations

import chess
import numpy as np
import pytest

from analysis.encoding import move_to_index
from analysis.encoding.chessbench import encode
from analysis.encoding.chessbench_actions import move_to_action
from analysis.models.chessbench.lc0_actions import lc0_indices_to_actions
from tests.conftest import require_shared_data

# Castling both ways for both sides, promotions and under-promotions (pushes and captures) for
# both sides, en passant, and a queen on e1 beside a king that may castle.
SPECIAL = [
    "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1",
    "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R b KQkq - 0 1",
    "1n2k3/P1P5/8/8/8/8/5p1p/4K1N1 w - - 0 1",
    "1n2k3/P1P5/8/8/8/8/5p1p/4K1N1 b - - 0 1",
    "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2",
    "4k3/8/8/8/8/8/8/R2QK2R w KQ - 0 1",
]


def _pairs(boards: list[chess.Board]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows, indices, expected = [], [], []
    for row, board in enumerate(boards):
        for move in board.legal_moves:
            rows.append(row)
            indices.append(move_to_index(board, move))
            expected.append(move_to_action(move))
    return np.array(rows), np.array(indices), np.array(expected)


def _check(boards: list[chess.Board]) -> int:
    rows, indices, expected = _pairs(boards)
    got = lc0_indices_to_actions(encode(boards).astype(np.uint8), rows, indices)
    np.testing.assert_array_equal(got, expected)
    return len(rows)


def test_special_moves_convert_as_the_board_does():
    assert _check([chess.Board(fen) for fen in SPECIAL]) > 100


def test_every_legal_move_of_the_sts_positions_converts_as_the_board_does():
    suite = require_shared_data("suites/sts_v3.epd")
    boards = [chess.Board.from_epd(line)[0] for line in suite.read_text().splitlines()[:600] if line.strip()]
    assert _check(boards) > 10_000


def test_an_index_no_legal_move_could_have_is_refused():
    castle = move_to_index(chess.Board("4k3/8/8/8/8/8/8/4K2R w K - 0 1"), chess.Move.from_uci("e1g1"))  # e1h1
    # With a pawn on e1 (no legal position has one) the plain move to the first rank reads as a knight
    # promotion e1h1n, which no table holds: the converter names the row instead of guessing.
    tokens = encode([chess.Board("4k3/8/8/8/8/8/8/4P2K w - - 0 1")]).astype(np.uint8)
    with pytest.raises(ValueError, match="of row 0 is no ChessBench action"):
        lc0_indices_to_actions(tokens, np.array([0]), np.array([castle]))
