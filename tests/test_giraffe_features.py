"""Giraffe's 363 features (Lai 2015, section 4.1) on hand-checked positions."""

import chess
import pytest

from analysis.encoding import get_encoding
from analysis.encoding.giraffe import INPUT_SIZE, MAX_MOVES, MOVE_FEATURES, TooManyMoves, encode
from analysis.encoding.giraffe.features import (BOARD_FEATURES, FEATURE_NAMES, GLOBAL_SIZE, PIECE_SIZE,
                                                SQUARE_SIZE, board_features, control, pawn_slots,
                                                white_view_features)
from analysis.encoding.giraffe.moves import MOVE_FEATURE_NAMES, move_features

ROOK, KING = control(500), control(1500)


def named(board: chess.Board, features=board_features) -> dict[str, float]:
    return dict(zip(FEATURE_NAMES, features(board).tolist()))


def test_count_and_groups():
    assert BOARD_FEATURES == 363 and len(set(FEATURE_NAMES)) == 363
    assert (GLOBAL_SIZE, PIECE_SIZE, SQUARE_SIZE) == (15, 220, 128)
    assert board_features(chess.Board()).shape == (363,)
    assert encode([chess.Board()]).shape == (1, INPUT_SIZE) and INPUT_SIZE == 363 + MAX_MOVES * MOVE_FEATURES


def test_control_values_order_attackers_by_value():
    assert control(0) == 0.0
    assert control(100) > control(325) > control(500) > control(975) > control(1500) > 0


def test_pawn_slots_follow_files_when_pawns_are_missing():
    # Only a, b, g, h pawns: the paper's example, slots 1, 2, 7, 8.
    f = named(chess.Board("4k3/8/8/8/8/8/PP4PP/4K3 w - - 0 1"))
    assert [f[f"w.pawn{i}.exists"] for i in range(1, 9)] == [1, 1, 0, 0, 0, 0, 1, 1]
    assert f["w.pawn7.x"] == pytest.approx(6 / 7) and f["w.pawn7.y"] == pytest.approx(1 / 7)
    assert all(f[f"b.pawn{i}.exists"] == 0 for i in range(1, 9))


def test_doubled_pawn_takes_the_nearest_free_slot():
    # c2, d2 and c3: c2 -> slot 3, d2 -> slot 4, c3 (file c taken) -> nearest free file, b (slot 2).
    assert pawn_slots([2, 3, 2]) == [2, 3, 1]
    f = named(chess.Board("4k3/8/8/8/8/2P5/2PP4/4K3 w - - 0 1"))
    assert [f[f"w.pawn{i}.exists"] for i in range(1, 9)] == [0, 1, 1, 1, 0, 0, 0, 0]
    assert (f["w.pawn2.x"], f["w.pawn2.y"]) == (pytest.approx(2 / 7), pytest.approx(2 / 7))
    assert pawn_slots([7] * 8) == [7, 6, 5, 4, 3, 2, 1, 0]


def test_attack_maps_of_a_rook_and_kings():
    f = named(chess.Board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1"))
    # Rook a1: a2-a8, b1-d1 and its own king's e1 (defended); king e1: d1, d2, e2, f2, f1.
    # The rook is the lower attacker of d1.
    white = {chess.square_name(sq): f[f"w.ctl.{chess.square_name(sq)}"] for sq in chess.SQUARES}
    expected = {**{f"a{r}": ROOK for r in range(2, 9)}, "b1": ROOK, "c1": ROOK, "d1": ROOK, "e1": ROOK,
                "d2": KING, "e2": KING, "f2": KING, "f1": KING}
    assert {k: v for k, v in white.items() if v} == pytest.approx(expected)
    black = {chess.square_name(sq) for sq in chess.SQUARES if f[f"b.ctl.{chess.square_name(sq)}"]}
    assert black == {"d8", "d7", "e7", "f7", "f8"}
    # The rook's slot: a1, defended by nobody, attacked by nobody; rays N 7 and E 3 (stopped by its king).
    assert (f["w.rook1.exists"], f["w.rook1.x"], f["w.rook1.y"]) == (1, 0, 0)
    assert (f["w.rook1.wctl"], f["w.rook1.bctl"]) == (0, 0)
    assert f["w.rook1.ray.N"] == pytest.approx(1.0) and f["w.rook1.ray.E"] == pytest.approx(3 / 7)
    assert f["w.rook1.ray.S"] == 0 and f["w.rook1.ray.W"] == 0
    assert f["w.rook1.safe"] == pytest.approx(10 / 14)
    assert f["w.rook2.exists"] == 0 and f["w.count.R"] == pytest.approx(0.5)
    assert (f["w.king.x"], f["w.king.y"], f["b.king.y"]) == (pytest.approx(4 / 7), 0, 1)


def test_ray_counts_a_capture_but_not_an_own_piece():
    f = named(chess.Board("4k3/8/8/3p4/8/8/3P4/3RK3 w - - 0 1"))
    assert f["w.rook1.ray.N"] == 0  # own pawn on d2
    f = named(chess.Board("4k3/8/8/3p4/8/8/8/3RK3 w - - 0 1"))
    assert f["w.rook1.ray.N"] == pytest.approx(4 / 7)  # d2, d3, d4 and the capture on d5


def test_global_features():
    f = named(chess.Board())
    assert f["stm"] == 1 and f["w.castle.K"] == f["b.castle.Q"] == f["w.rook.castle.Q"] == 1
    assert f["w.count.P"] == 1 and f["b.count.Q"] == 1 and f["b.count.N"] == 1
    board = chess.Board("r3k3/8/8/8/8/8/8/4K2R b Kq - 0 1")
    f = named(board, white_view_features)
    assert f["stm"] == 0 and f["w.castle.K"] == 1 and f["w.castle.Q"] == 0 and f["b.castle.Q"] == 1
    # From the mover's side Black is "w": its queenside right, and White's kingside one as "b".
    f = named(board)
    assert f["stm"] == 1 and f["w.castle.Q"] == 1 and f["w.castle.K"] == 0 and f["b.castle.K"] == 1
    assert f["w.king.y"] == 0 and f["b.king.y"] == 1 and f["w.rook1.y"] == 0


def test_bishop_slots_by_square_colour():
    # White's c1-coloured (dark) bishop takes slot 1 wherever it stands; the light one slot 2.
    f = named(chess.Board("4k3/8/8/8/8/8/8/2B1KB2 w - - 0 1"))
    assert f["w.bishop1.x"] == pytest.approx(2 / 7) and f["w.bishop2.x"] == pytest.approx(5 / 7)
    f = named(chess.Board("4k3/8/8/8/8/8/8/4KB2 w - - 0 1"))
    assert f["w.bishop1.exists"] == 0 and f["w.bishop2.exists"] == 1


def _mirror_index(name: str) -> tuple[str, bool]:
    """The name a feature has in the mirrored position, and whether its value becomes 1 - value."""
    swap = {"w": "b", "b": "w"}
    parts = name.split(".")
    if name == "stm":
        return name, True
    parts[0] = swap[parts[0]]
    if parts[-1] in ("wctl", "bctl"):
        parts[-1] = {"wctl": "bctl", "bctl": "wctl"}[parts[-1]]
    if parts[1] == "ctl":
        sq = chess.parse_square(parts[2])
        parts[2] = chess.square_name(chess.square_mirror(sq))
    if len(parts) == 4 and parts[2] == "ray":
        parts[3] = parts[3].translate(str.maketrans("NS", "SN"))
    flip = parts[-1] == "y"
    return ".".join(parts), flip


def test_mirrored_position_gives_mirrored_white_view_features():
    for fen in ("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
                "2r2rk1/pp1bqppp/2n1p3/3pP3/3P4/P1B2N2/1P3PPP/R2QR1K1 b - - 1 16",
                "8/5k2/3p4/1p1P1P2/1P3K2/8/8/8 w - - 0 1"):
        board = chess.Board(fen)
        f, g = (named(b, white_view_features) for b in (board, board.mirror()))
        for name, value in f.items():
            other, flip = _mirror_index(name)
            present = name == "stm" or "king" in name or f.get(name.rsplit(".", 1)[0] + ".exists") == 1
            if flip and present:
                assert g[other] == pytest.approx(1 - value), (fen, name)
            else:
                assert g[other] == pytest.approx(value), (fen, name)


def test_a_position_and_its_colour_mirror_have_equal_features():
    """The mover's view makes a network's values colour-symmetric exactly (the sanity suite's
    mirror checks); the move features already read from the mover's side."""
    for fen in ("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/R1BQK2R w KQkq - 4 4",
                "2r2rk1/pp1bqppp/2n1p3/3pP3/3P4/P1B2N2/1P3PPP/R2QR1K1 b - - 1 16", "r3k3/8/8/8/8/8/8/4K2R b Kq - 0 1"):
        board = chess.Board(fen)
        mirror = board.mirror()
        assert (board_features(board) == board_features(mirror)).all(), fen
        moves = list(board.legal_moves)
        mirrored_moves = [chess.Move(chess.square_mirror(m.from_square), chess.square_mirror(m.to_square), m.promotion)
                          for m in moves]
        assert (move_features(board, moves) == move_features(mirror, mirrored_moves)).all(), fen
        black = board if board.turn == chess.BLACK else board.mirror()
        assert (board_features(black) == white_view_features(black.mirror())).all()


def test_extra_promoted_pieces_are_counted_not_slotted():
    f = named(chess.Board("4k3/8/8/8/8/8/8/QQQ1K3 w - - 0 1"))
    assert f["w.count.Q"] == 3 and f["w.queen1.exists"] == 1 and f["w.queen1.x"] == 0


def test_move_features():
    board = chess.Board("4k3/1P6/8/8/8/8/8/4K2R b K - 0 1")
    board.turn = chess.WHITE
    moves = list(board.legal_moves)
    rows = move_features(board, moves)
    assert rows.shape == (MAX_MOVES, MOVE_FEATURES) and rows[len(moves):].sum() == 0
    col = {n: i for i, n in enumerate(MOVE_FEATURE_NAMES)}
    promo = rows[moves.index(chess.Move.from_uci("b7b8n"))]
    assert promo[col["promotion.n"]] == 1 and promo[col["piece.p"]] == 1 and promo[col["to.y"]] == 1
    castle = rows[moves.index(chess.Move.from_uci("e1g1"))]
    assert castle[col["piece.k"]] == 1 and castle[col["to.x"]] == pytest.approx(6 / 7)
    # Black's moves read from black's side: e8-e7 goes from y 0 to y 1/7.
    black = chess.Board("4k3/8/8/8/8/8/8/4K3 b - - 0 1")
    row = move_features(black, [chess.Move.from_uci("e8e7")])[0]
    assert row[col["from.y"]] == 0 and row[col["to.y"]] == pytest.approx(1 / 7)


def test_too_many_moves_is_a_clear_error():
    # No legal position has more than 218 moves (18 queens here give 215), so the guard is
    # exercised with a longer list than any board makes.
    crowded = chess.Board("3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/3Q4/1Q3Q2/k6K w - - 0 1")
    moves = list(crowded.legal_moves)
    assert len(moves) == 215 and encode([crowded]).shape == (1, INPUT_SIZE)
    with pytest.raises(TooManyMoves, match="legal moves"):
        move_features(crowded, moves * 2)


def test_registered():
    enc = get_encoding("giraffe-363")
    moves, idx = enc.legal_moves(chess.Board())
    assert len(moves) == 20 and idx.tolist() == list(range(20))
    assert enc.position_key(chess.Board()) == enc.position_key(chess.Board())
