"""lc0 INPUT_CLASSICAL_112_PLANE encoding of known positions."""

import chess
import numpy as np

from analysis.encoding import encode_planes, encode_tokens, pack

PIECES = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING)


def reference_piece_planes(board: chess.Board, us: chess.Color) -> np.ndarray:
    """12 x 64 planes written square by square, independent of the bitboard code."""
    planes = np.zeros((12, 64), np.float32)
    for square, piece in board.piece_map().items():
        s = square if us == chess.WHITE else chess.square_mirror(square)
        offset = 0 if piece.color == us else 6
        planes[offset + PIECES.index(piece.piece_type), s] = 1
    return planes


def planes_of(board: chess.Board) -> np.ndarray:
    return encode_planes([board])[0].reshape(112, 64)


def test_start_position():
    p = planes_of(chess.Board())
    assert p[0].nonzero()[0].tolist() == list(range(8, 16))  # our pawns on rank 2
    assert p[6].nonzero()[0].tolist() == list(range(48, 56))  # their pawns on rank 7
    assert p[5].nonzero()[0].tolist() == [4] and p[11].nonzero()[0].tolist() == [60]  # kings e1, e8
    assert p[13:104].sum() == 0  # a game from the start position has no history to fill
    assert (p[104:108] == 1).all()  # all four castling rights
    assert p[108].sum() == 0 and p[109].sum() == 0 and p[110].sum() == 0
    assert (p[111] == 1).all()


def test_tokens_are_planes_transposed():
    board = chess.Board()
    board.push_san("e4")
    tokens = encode_tokens([board])[0]
    assert tokens.shape == (64, 112)
    np.testing.assert_array_equal(tokens.T, planes_of(board))


def test_black_to_move_equals_mirrored_white_position():
    board = chess.Board()
    board.push_san("e4")
    mirrored = board.mirror()  # white to move, colours swapped, board flipped vertically
    mirrored.clear_stack()
    black, white = planes_of(board), planes_of(mirrored)
    np.testing.assert_array_equal(black[:13], white[:13])
    np.testing.assert_array_equal(black[104:108], white[104:108])
    assert (black[108] == 1).all() and (white[108] == 0).all()
    # In black's frame, black's own pawns sit on "rank 2" and white's e-pawn on e5 (square 36).
    assert black[0].nonzero()[0].tolist() == list(range(8, 16))
    assert 36 in black[6].nonzero()[0]


def test_history_planes_follow_the_game():
    board = chess.Board()
    boards = [board.copy()]
    for san in ("e4", "c5", "Nf3", "d6", "d4", "cxd4", "Nxd4", "Nf6", "Nc3"):
        board.push_san(san)
        boards.append(board.copy())
    p = planes_of(board)
    us = board.turn
    for step in range(8):
        expected = reference_piece_planes(boards[-1 - step], us)
        np.testing.assert_array_equal(p[13 * step: 13 * step + 12], expected, err_msg=f"history step {step}")
    assert p[13 * np.arange(8) + 12].sum() == 0  # nothing repeated


def test_repetition_flags():
    board = chess.Board()
    for san in ("Nf3", "Nf6", "Ng1", "Ng8", "Nf3"):
        board.push_san(san)
    p = planes_of(board)
    rep = p[13 * np.arange(8) + 12].max(axis=1)
    # Steps: 0 = after the second Nf3 (seen at step 4), 1 = start position again
    # (first seen at step 5); the first occurrences themselves carry no flag.
    assert rep.tolist() == [1, 1, 0, 0, 0, 0, 0, 0]
    board.push_san("Nf6")
    rep = planes_of(board)[13 * np.arange(8) + 12].max(axis=1)
    assert rep.tolist() == [1, 1, 1, 0, 0, 0, 0, 0]


def test_repetition_flag_of_the_oldest_history_step():
    board = chess.Board()
    for san in ("Nf3", "Nf6", "Ng1", "Ng8", "Nc3", "Nc6", "Nb1", "Nb8", "e4", "e5", "Nf3"):
        board.push_san(san)
    # Step 7 is the start position reached again after 1.Nf3 Nf6 2.Ng1 Ng8 (and once
    # more after 4.Nb1 Nb8 at step 3); seeing it needs keys older than step 7.
    rep = planes_of(board)[13 * np.arange(8) + 12].max(axis=1)
    assert rep.tolist() == [0, 0, 0, 1, 0, 0, 0, 1]


def test_fen_without_history_repeats_the_position():
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    p = planes_of(board)
    for step in range(1, 8):
        np.testing.assert_array_equal(p[13 * step: 13 * step + 13], p[0:13])
    assert (p[109] == 2).all()  # raw rule-50 count


def test_fen_with_en_passant_fills_with_the_pawn_back_home():
    board = chess.Board("rnbqkbnr/ppp1pppp/8/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3")
    p = planes_of(board)
    d5, d7 = chess.D5, chess.D7
    assert p[6, d5] == 1 and p[6, d7] == 0  # current position: their pawn on d5
    for step in range(1, 8):
        theirs = p[13 * step + 6]
        assert theirs[d5] == 0 and theirs[d7] == 1, f"step {step}"
        np.testing.assert_array_equal(p[13 * step: 13 * step + 6], p[0:6])  # our pieces unchanged


def test_pack_key_is_what_the_network_sees():
    def play(*sans):
        board = chess.Board()
        for san in sans:
            board.push_san(san)
        return board

    # Transposed move orders that differ only before the eight history boards: same key.
    a = play("Nf3", "Nf6", "g3", "g6", "Bg2", "Bg7", "O-O", "O-O", "d3", "d6")
    b = play("g3", "Nf6", "Nf3", "g6", "Bg2", "Bg7", "O-O", "O-O", "d3", "d6")
    assert a.fen() == b.fen() and pack(a).key() == pack(b).key()
    # A transposition inside the history window: same FEN, different key.
    c, d = play("Nf3", "Nf6", "Nc3", "Nc6"), play("Nc3", "Nc6", "Nf3", "Nf6")
    assert c.fen() == d.fen() and pack(c).key() != pack(d).key()
    assert pack(chess.Board(c.fen())).key() != pack(c).key()  # a bare FEN repeats itself as history
