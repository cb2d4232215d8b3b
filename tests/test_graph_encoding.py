"""The AlphaGateau graph encoding: edge sets, Table 1/2 features, the edge <-> lc0 policy map."""

from __future__ import annotations

import random

import chess
import numpy as np
import pytest

from analysis.encoding import get_encoding, legal_move_indices, move_to_index
from analysis.encoding.graph import (
    GRAPH_8X8,
    NODE_FEATURES,
    encode_graphs,
    graph_for_width,
    input_width,
    legal_edges,
    node_features,
    split_input,
)
from analysis.encoding.graph_geometry import (
    EDGE_FEATURES,
    STATIC_EDGE_FEATURES,
    board_graph,
    edge_policy_maps,
    move_to_edge,
    policy_to_edges,
)


def _feature(graph, name):
    return graph.static_features[:, STATIC_EDGE_FEATURES.index(name)]


def test_edge_counts_and_parallel_underpromotions():
    assert (board_graph(8).nodes, board_graph(8).edges) == (64, 1858)
    assert (board_graph(5).nodes, board_graph(5).edges) == (25, 455)
    assert len(EDGE_FEATURES) == 15 and NODE_FEATURES == 119
    for size, promotions in ((8, 66), (5, 39)):
        graph = board_graph(size)
        assert int((graph.promotions > 0).sum()) == promotions
        triples = set(zip(graph.senders.tolist(), graph.receivers.tolist(), graph.promotions.tolist()))
        assert len(triples) == graph.edges  # parallel edges differ only by their piece
        assert not (graph.senders == graph.receivers).any()


def test_static_edge_feature_counts():
    g8, g5 = board_graph(8), board_graph(5)
    assert _feature(g8, "knight").sum() == 336 and _feature(g8, "rook").sum() == 896
    assert _feature(g8, "bishop").sum() == 560 and _feature(g8, "queen").sum() == 1456
    assert _feature(g8, "mover_king").sum() == 420 + 2  # + castling as king takes rook
    assert _feature(g8, "mover_pawn").sum() == 6 * 22 + 8 + 66  # steps, double steps, underpromotions
    assert _feature(g5, "mover_pawn").sum() == 3 * 13 + 39  # no double step on 5x5
    assert _feature(g5, "mover_king").sum() == 144  # no castling on 5x5
    for name in ("promotes_queen", "promotes_knight", "promotes_bishop", "promotes_rook"):
        assert _feature(g8, name).sum() == 22 and _feature(g5, name).sum() == 13


def test_edge_policy_map_is_a_bijection_both_ways():
    edge_to_policy, policy_to_edge = edge_policy_maps()
    assert sorted(edge_to_policy.tolist()) == list(range(1858))
    assert (edge_to_policy[policy_to_edge] == np.arange(1858)).all()
    assert (policy_to_edge[edge_to_policy] == np.arange(1858)).all()


@pytest.mark.parametrize("fen", [
    chess.STARTING_FEN,
    "r3k2r/1P4P1/8/8/8/8/1p4p1/R3K2R w KQkq - 0 1",  # promotions both ways and castling
    "r3k2r/1P4P1/8/8/8/8/1p4p1/R3K2R b KQkq - 0 1",
    "4k3/R6K/8/8/8/8/8/8 w - - 0 1",  # Ra7a8 / Kh7h8: non-pawn moves on the promotion step
])
def test_policy_indices_and_edges_agree_move_by_move(fen):
    board = chess.Board(fen)
    moves, indices = legal_move_indices(board)
    edges = np.array([move_to_edge(8, board, m) for m in moves])
    assert (policy_to_edges(board, indices) == edges).all()
    assert len(set(edges.tolist())) == len(moves)


def test_random_games_map_through_the_policy_index():
    rng = random.Random(3)
    board = chess.Board()
    for _ in range(300):
        moves = list(board.legal_moves)
        if not moves:
            board = chess.Board()
            continue
        _, indices = legal_move_indices(board)
        assert (policy_to_edges(board, indices) == legal_edges(board)[1]).all()
        board.push(rng.choice(moves))


def test_hand_checked_features_after_e4():
    board = chess.Board()
    board.push_san("e4")
    nodes, legal = split_input(GRAPH_8X8.encode([board]), board_graph(8))
    h = nodes[0]
    # Black to move: the frame is mirrored, so real e7 (black's pawn) is node 12 and real e4 node 36.
    assert h[12, 0] == 1 and h[12, 6] == 0  # own pawn on e7
    assert h[36, 6] == 1 and h[52, 6] == 0  # their pawn on e4, not on e2 ...
    assert h[52, 14 + 6] == 1 and h[36, 14 + 6] == 0  # ... where it stood one ply earlier
    assert h[4, 5] == 1 and h[60, 11] == 1  # own king e8 -> node 4, their king e1 -> node 60
    assert h[:, 28:112].sum() == 0  # no older history, no repetition
    assert (h[:, 112] == 1).all() and np.allclose(h[:, 113], 1 / 512)
    assert (h[:, 114:118] == 1).all() and (h[:, 118] == 0).all()
    assert legal[0].sum() == 20
    edges = board_graph(8).edge_index()
    assert legal[0, edges[(12, 28, 0)]] == 1  # e7e5 in the mover's frame: e2e4
    assert legal[0, edges[(6, 21, 0)]] == 1  # Ng8f6: g1f3


def test_repetition_flags():
    board = chess.Board()
    for san in ("Nf3", "Nf6", "Ng1", "Ng8"):
        board.push_san(san)
    h = node_features(board)
    assert (h[:, 12] == 1).all() and (h[:, 13] == 0).all()  # start position, seen once before
    assert (h[:, 14 * 4 + 12] == 0).all()  # the first start position had not occurred before


@pytest.mark.parametrize("fen", [
    "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
    "8/P3k3/8/3pP3/8/8/5K2/8 w - d6 0 40",
])
def test_mirrored_position_gives_mirrored_features(fen):
    board = chess.Board(fen)
    mirror = board.mirror()
    a, b = encode_graphs([board], 8), encode_graphs([mirror], 8)
    nodes_a, legal_a = split_input(a, board_graph(8))
    nodes_b, legal_b = split_input(b, board_graph(8))
    assert (legal_a == legal_b).all()
    assert (nodes_a[..., :112] == nodes_b[..., :112]).all() and (nodes_a[..., 114:] == nodes_b[..., 114:]).all()
    # Only the side to move differs, and the ply count by the one ply black moves later.
    assert (nodes_a[..., 112] != nodes_b[..., 112]).all()
    assert np.allclose(nodes_b[..., 113] - nodes_a[..., 113], 1 / 512)


def test_widths_name_the_board_size():
    assert graph_for_width(input_width(8)).size == 8 and graph_for_width(input_width(5)).size == 5
    with pytest.raises(ValueError, match="fits no board size"):
        graph_for_width(1234)


def test_registered_with_lc0_vocabulary_semantics():
    encoding = get_encoding("graph/alphazero-119-8x8")
    vocab = encoding.vocabulary()
    assert len(vocab) == 1858 and vocab[:3] == ["a1b1", "a1c1", "a1d1"]
    board = chess.Board("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1")
    moves, edges = encoding.legal_moves(board)
    queen = moves.index(chess.Move.from_uci("b7b8q"))
    assert vocab[edges[queen]] == "b7b8"  # the plain edge is the queen promotion
    assert edge_policy_maps()[0][edges[queen]] == move_to_index(board, chess.Move.from_uci("b7b8q"))


def test_position_keys_are_equal_exactly_when_inputs_are():
    a = chess.Board("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2")
    b = chess.Board("4k3/8/8/3pP3/8/8/8/4K3 w - - 0 2")  # the same but en passant is gone
    assert (encode_graphs([a], 8) != encode_graphs([b], 8)).any()
    assert GRAPH_8X8.position_key(a) != GRAPH_8X8.position_key(b)
    c = chess.Board()
    for san in ("Nf3", "Nf6", "Ng1", "Ng8"):
        c.push_san(san)
    assert GRAPH_8X8.position_key(c) != GRAPH_8X8.position_key(chess.Board())  # history and ply differ
    assert GRAPH_8X8.position_key(chess.Board()) == GRAPH_8X8.position_key(chess.Board())
