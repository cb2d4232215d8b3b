"""The 1858-move vocabulary: lc0's order, and a round trip for every legal move."""

import random

import chess
import chess.pgn
import pytest

from analysis.encoding import POLICY_SIZE, index_to_move, legal_move_indices, move_to_index, vocabulary_uci
from tests.conftest import require_shared_data


def test_vocabulary_matches_lc0_order():
    uci = vocabulary_uci()
    assert len(uci) == len(set(uci)) == POLICY_SIZE
    assert uci[:4] == ["a1b1", "a1c1", "a1d1", "a1e1"]
    assert uci[1791] == "h8g8"
    assert uci[1792:1798] == ["a7a8q", "a7a8r", "a7a8b", "a7b8q", "a7b8r", "a7b8b"]
    assert uci[-3:] == ["h7h8q", "h7h8r", "h7h8b"]
    # f8's entries in lc0's list run f8f1, f8f2, f8a3 ...: sorted by to-square index.
    f8 = [m for m in uci if m.startswith("f8")]
    assert f8[:3] == ["f8f1", "f8f2", "f8a3"]


def assert_round_trip(board: chess.Board) -> int:
    moves, indices = legal_move_indices(board)
    assert len(set(indices.tolist())) == len(moves), board.fen()
    for move, index in zip(moves, indices):
        assert index_to_move(board, int(index)) == move, (board.fen(), move.uci())
    return len(moves)


def random_positions(count: int, seed: int = 7):
    rng = random.Random(seed)
    positions = []
    while len(positions) < count:
        board = chess.Board()
        for _ in range(rng.randrange(10, 160)):
            moves = list(board.legal_moves)
            if not moves:
                break
            # Prefer promotions and captures now and then so endgames with promotions show up.
            special = [m for m in moves if m.promotion or board.is_en_passant(m) or board.is_castling(m)]
            board.push(rng.choice(special) if special and rng.random() < 0.5 else rng.choice(moves))
            positions.append(board.copy(stack=False))
    return positions[:count]


def game_positions(limit: int):
    positions = []
    for pgn_path in sorted(require_shared_data("pgn").glob("*.pgn")):
        with pgn_path.open(encoding="utf-8", errors="replace") as handle:
            while len(positions) < limit:
                game = chess.pgn.read_game(handle)
                if game is None:
                    break
                board = game.board()
                for move in game.mainline_moves():
                    board.push(move)
                    positions.append(board.copy(stack=False))
        if len(positions) >= limit:
            break
    return positions[:limit]


def test_round_trip_on_random_play():
    positions = random_positions(1500)
    kinds = {"promotion": 0, "underpromotion": 0, "castling": 0, "en_passant": 0, "black": 0}
    for board in positions:
        assert_round_trip(board)
        kinds["black"] += board.turn == chess.BLACK
        for move in board.legal_moves:
            kinds["promotion"] += bool(move.promotion)
            kinds["underpromotion"] += move.promotion == chess.KNIGHT
            kinds["castling"] += board.is_castling(move)
            kinds["en_passant"] += board.is_en_passant(move)
    assert all(count > 0 for count in kinds.values()), kinds


def test_round_trip_on_master_games():
    positions = game_positions(1200)
    assert len(positions) == 1200
    assert sum(assert_round_trip(b) for b in positions) > 20_000


@pytest.mark.parametrize("fen, uci, twin", [
    ("4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7a8n", "a7a8"),  # knight promotion shares the plain index
    ("4k3/8/8/8/8/8/p7/4K3 b - - 0 1", "a2a1n", "a2a1"),
])
def test_knight_promotion_shares_the_plain_move_index(fen, uci, twin):
    board = chess.Board(fen)
    move = chess.Move.from_uci(uci)
    index = move_to_index(board, move)
    assert index == move_to_index(board, chess.Move.from_uci(twin))
    assert index_to_move(board, index) == move


def test_black_moves_are_written_in_the_mirrored_frame():
    board = chess.Board()
    board.push_san("e4")
    # 1... e5 for black is e2e4 in black's frame.
    assert move_to_index(board, chess.Move.from_uci("e7e5")) == vocabulary_uci().index("e2e4")
    queen_promo = chess.Board("4k3/8/8/8/8/8/p7/4K3 b - - 0 1")
    assert vocabulary_uci()[move_to_index(queen_promo, chess.Move.from_uci("a2a1q"))] == "a7a8q"


def test_castling_is_king_takes_rook():
    board = chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    assert vocabulary_uci()[move_to_index(board, chess.Move.from_uci("e1g1"))] == "e1h1"
    assert vocabulary_uci()[move_to_index(board, chess.Move.from_uci("e1c1"))] == "e1a1"
    board.turn = chess.BLACK
    assert vocabulary_uci()[move_to_index(board, chess.Move.from_uci("e8g8"))] == "e1h1"


def test_index_out_of_range_is_refused():
    with pytest.raises(ValueError):
        index_to_move(chess.Board(), POLICY_SIZE)
