"""5x5 Gardner chess: perft against an independent mailbox move generator, FEN in and out,
game ends, and the move vocabulary on the 455 edges."""

from __future__ import annotations

import random

import chess
import numpy as np
import pytest

from analysis.encoding.graph import GRAPH_5X5, legal_edges
from analysis.gardner import GARDNER_START, GardnerBoard

# --- An independent reference: a plain 5x5 mailbox generator sharing no code with python-chess. ---
_STEPS = {
    "n": [(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)],
    "k": [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)],
}
_RAYS = {"b": [(1, 1), (1, -1), (-1, 1), (-1, -1)], "r": [(1, 0), (-1, 0), (0, 1), (0, -1)]}
_RAYS["q"] = _RAYS["b"] + _RAYS["r"]


def _parse(fen: str) -> tuple[dict, str]:
    rows, turn = fen.split()[0].split("/"), fen.split()[1]
    grid = {}
    for k, row in enumerate(rows):
        f = 0
        for ch in row:
            if ch.isdigit():
                f += int(ch)
            else:
                grid[(f, 4 - k)] = ch
                f += 1
    return grid, turn


def _white(ch: str) -> bool:
    return ch.isupper()


def _pseudo(grid: dict, white: bool) -> list[tuple]:
    moves = []
    inside = lambda f, r: 0 <= f < 5 and 0 <= r < 5  # noqa: E731
    for (f, r), ch in grid.items():
        if _white(ch) != white:
            continue
        kind = ch.lower()
        if kind == "p":
            d, last = (1, 4) if white else (-1, 0)
            targets = []
            if inside(f, r + d) and (f, r + d) not in grid:
                targets.append((f, r + d))
            for df in (-1, 1):
                t = grid.get((f + df, r + d))
                if t is not None and _white(t) != white:
                    targets.append((f + df, r + d))
            for t in targets:
                moves.extend(((f, r), t, p) for p in ("q", "r", "b", "n")) if t[1] == last else \
                    moves.append(((f, r), t, None))
            continue
        for df, dr in _STEPS.get(kind, []):
            t = (f + df, r + dr)
            if inside(*t) and (t not in grid or _white(grid[t]) != white):
                moves.append(((f, r), t, None))
        for df, dr in _RAYS.get(kind, []):
            t = (f + df, r + dr)
            while inside(*t):
                if t in grid:
                    if _white(grid[t]) != white:
                        moves.append(((f, r), t, None))
                    break
                moves.append(((f, r), t, None))
                t = (t[0] + df, t[1] + dr)
    return moves


def _play(grid: dict, move: tuple) -> dict:
    frm, to, promo = move
    after = dict(grid)
    piece = after.pop(frm)
    after[to] = (promo.upper() if _white(piece) else promo) if promo else piece
    return after


def _in_check(grid: dict, white: bool) -> bool:
    king = next(sq for sq, ch in grid.items() if ch == ("K" if white else "k"))
    return any(to == king for _, to, _ in _pseudo(grid, not white))


def _reference_perft(grid: dict, white: bool, depth: int) -> int:
    if depth == 0:
        return 1
    total = 0
    for move in _pseudo(grid, white):
        after = _play(grid, move)
        if not _in_check(after, white):
            total += _reference_perft(after, not white, depth - 1)
    return total


def _perft(board: GardnerBoard, depth: int) -> int:
    if depth == 0:
        return 1
    total = 0
    for move in list(board.legal_moves):
        board.push(move)
        total += _perft(board, depth - 1)
        board.pop()
    return total


@pytest.mark.parametrize("fen,depth", [
    (GARDNER_START, 4),
    ("r3k/1P3/5/2p1p/K3R w - - 0 1", 3),  # promotions, a rook on an open file
    ("4k/3P1/2n2/2p2/K3R b - - 0 1", 3),  # black pawn two steps from promoting
])
def test_perft_matches_an_independent_generator(fen, depth):
    grid, turn = _parse(fen)
    board = GardnerBoard(fen)
    for d in range(1, depth + 1):
        assert _perft(board, d) == _reference_perft(grid, turn == "w", d), f"depth {d}"


def test_start_position_perft_figures():
    # Derived by the reference generator above; python-chess's corner must give the same.
    assert [_perft(GardnerBoard(), d) for d in (1, 2, 3)] == [7, 53, 506]


def test_fen_round_trip_and_bad_fens():
    board = GardnerBoard()
    assert board.fen() == GARDNER_START
    board.push_uci("b1c3")
    assert board.fen() == "rnbqk/ppppp/2N2/PPPPP/R1BQK b - - 1 1"
    assert GardnerBoard(board.fen()).fen() == board.fen()
    for bad, reason in [
        (chess.STARTING_FEN, "5 ranks"),
        ("rnbqk/ppppp/5/PPPPP/RNBQK w KQ - 0 1", "no castling"),
        ("rnbqk/ppppp/6/PPPPP/RNBQK w - - 0 1", "6 squares long"),
        ("rnbqk/ppppp/5/PPPPP w - - 0 1", "5 ranks"),
        ("rnbq1/ppppp/5/PPPPP/RNBQK w - - 0 1", "not a legal position"),
    ]:
        with pytest.raises(ValueError, match=reason):
            GardnerBoard(bad)


def test_rules_no_double_step_promotion_on_the_fifth_rank():
    board = GardnerBoard()
    assert chess.Move.from_uci("a2a4") not in board.legal_moves
    board = GardnerBoard("2k2/P4/5/5/4K w - - 0 1")
    assert {m.uci() for m in board.legal_moves if m.from_square == chess.A4} == {"a4a5q", "a4a5r", "a4a5b", "a4a5n"}
    board.push_uci("a4a5q")
    assert board.piece_at(chess.A5) == chess.Piece(chess.QUEEN, chess.WHITE)
    assert all(chess.square_file(m.to_square) < 5 and chess.square_rank(m.to_square) < 5
               for m in GardnerBoard("1k3/5/2Q2/5/4K w - - 0 1").legal_moves)


def test_game_ends():
    mate = GardnerBoard("k4/2Q2/1K3/5/5 w - - 0 1")
    mate.push_uci("c4b4")
    assert mate.outcome().termination == chess.Termination.CHECKMATE and mate.outcome().winner is chess.WHITE
    assert GardnerBoard("k4/5/1QK2/5/5 b - - 0 1").outcome().termination == chess.Termination.STALEMATE
    assert GardnerBoard("k4/5/5/5/3NK w - - 0 1").outcome().termination == chess.Termination.INSUFFICIENT_MATERIAL
    assert GardnerBoard("k4/5/5/4R/4K w - - 100 60").outcome().termination == chess.Termination.FIFTY_MOVES
    assert GardnerBoard("k4/5/5/4R/4K w - - 0 129").outcome().termination == chess.Termination.VARIANT_DRAW
    board = GardnerBoard("k4/5/5/4R/4K w - - 0 1")
    for uci in ("e2d2", "a5b5", "d2e2", "b5a5") * 2:
        board.push_uci(uci)
    assert board.outcome().termination == chess.Termination.THREEFOLD_REPETITION
    assert GardnerBoard().outcome() is None


def test_moves_are_edges_of_the_455_edge_vocabulary():
    vocabulary = GRAPH_5X5.vocabulary()
    assert len(vocabulary) == 455 and len(set(vocabulary)) == 455
    rng = random.Random(0)
    seen = set()
    for _ in range(30):
        board = GardnerBoard()
        while board.outcome() is None:
            moves, edges = legal_edges(board)
            assert len(set(edges.tolist())) == len(moves)
            for move, edge in zip(moves, edges):
                # The vocabulary is written for white to move; black's moves are mirrored.
                frm, to = move.from_square, move.to_square
                if board.turn == chess.BLACK:
                    frm = chess.square(chess.square_file(frm), 4 - chess.square_rank(frm))
                    to = chess.square(chess.square_file(to), 4 - chess.square_rank(to))
                promo = move.promotion if move.promotion in (chess.KNIGHT, chess.BISHOP, chess.ROOK) else None
                assert vocabulary[edge] == chess.Move(frm, to, promo).uci()
                seen.add(int(edge))
            board.push(rng.choice(moves))
    assert len(seen) > 150
    encoded = GRAPH_5X5.encode([board])
    assert encoded.shape == (1, 25 * 119 + 455) and np.isfinite(encoded).all()
