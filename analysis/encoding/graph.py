"""Positions as graphs (AlphaGateau, section 4.2): 119 node features (Table 1) and the
per-position legal flag of each edge (Table 2's first column), as registered encodings.

An encoded batch is one float32 array (B, N * 119 + E): the node features of
the N nodes row by row, then the legal flag of the E edges; the static edge
features come from ``board_graph``. The width names the board size, so a
network finds its graph from its input (``graph_for_width``) and one network
takes 5x5 and 8x8 batches.

Node features, per node (square) in the mover's frame, as the AlphaZero planes
the paper builds on:

=========  ===============================================================
0..111     8 history steps x 14: own P N B R Q K, their P N B R Q K, and
           "occurred once before" / "occurred twice before" (repetitions);
           step 0 is the position, step k the one k plies earlier, zeros
           where the game has no such position (a board set up from a FEN)
112        side to move (0 white, 1 black)
113        plies played / the variant's ply limit (512 on 8x8, 256 on 5x5,
           pgx's limits), clipped to 1
114..117   castling rights: own queenside, own kingside, their queenside,
           their kingside (always 0 on 5x5, kept so the width is the same)
118        no-progress (50-move) counter / 100
=========  ===============================================================

A board set up from a FEN (no move stack, as a pasted position) has zeros in
``HISTORY_FEATURES`` (steps 1..7 and step 0's repetition flags) and is
otherwise encoded as the same position reached with its moves: pieces,
castling, counters and legal edges do not depend on the move stack.

``Board.mirror()`` (colours swapped, the board flipped, the move number kept)
changes only ``BLACK_TO_MOVE`` and, by one ply, ``PLY_COUNT``: the features are
in the mover's frame, and the move number counts from White's first move.

The paper's "soft one-hot" is a plain one-hot here: a square holds one piece.
The public code (pgx) sets the first repetition flag when the count is 0; we
follow AlphaZero's meaning (once / twice before), as Table 1 reads.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import Sequence

import chess
import numpy as np

from analysis.encoding.graph_geometry import (
    BoardGraph,
    board_graph,
    edge_policy_maps,
    move_to_edge,
    square_of_node,
)
from analysis.encoding.registry import Encoding

NODE_FEATURES = 119
HISTORY = 8
_PIECES = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING)
PLY_LIMITS = {8: 512, 5: 256}
# Feature columns by meaning (module doc).
HISTORY_FEATURES = slice(12, 14 * HISTORY)  # zero for a board with no move stack
BLACK_TO_MOVE = 112
PLY_COUNT = 113
NO_PROGRESS = 118
BOARD_SIZES = tuple(PLY_LIMITS)


def board_size(board: chess.Board) -> int:
    """5 for a Gardner board (``analysis.gardner``), else 8."""
    return int(getattr(board, "board_size", 8))


def input_width(size: int) -> int:
    graph = board_graph(size)
    return graph.nodes * NODE_FEATURES + graph.edges


@lru_cache(maxsize=None)
def _width_to_size() -> dict[int, int]:
    return {input_width(size): size for size in BOARD_SIZES}


def graph_for_width(width: int) -> BoardGraph:
    """The board graph of an encoded batch of ``width`` columns (ValueError for any other width)."""
    try:
        return board_graph(_width_to_size()[int(width)])
    except KeyError:
        known = ", ".join(f"{w} ({s}x{s})" for w, s in _width_to_size().items())
        raise ValueError(f"graph input of width {width} fits no board size; expected {known}") from None


def _piece_planes(board: chess.Board, us: chess.Color, nodes: np.ndarray) -> np.ndarray:
    """(12, N) own then their pieces on each node: the 12 bitboards unpacked in one go."""
    masks = np.array([board.pieces_mask(piece, colour) for colour in (us, not us) for piece in _PIECES],
                     dtype="<u8")
    bits = np.unpackbits(masks.view(np.uint8).reshape(12, 8), axis=1, bitorder="little")  # (12, 64) by square
    return bits[:, nodes]


def node_features(board: chess.Board) -> np.ndarray:
    """(N, 119) Table 1 for ``board`` (history from its move stack)."""
    size = board_size(board)
    us = board.turn
    nodes = square_of_node(size, us)
    out = np.zeros((NODE_FEATURES, len(nodes)), np.float32)
    past = board.copy(stack=min(len(board.move_stack), HISTORY - 1 + 100))
    for step in range(HISTORY):
        base = 14 * step
        out[base:base + 12] = _piece_planes(past, us, nodes)
        out[base + 12] = float(past.is_repetition(2))
        out[base + 13] = float(past.is_repetition(3))
        if not past.move_stack:
            break
        past.pop()
    out[BLACK_TO_MOVE] = float(us == chess.BLACK)
    out[PLY_COUNT] = ply_fraction(board.ply(), size)
    them = not us
    out[114] = float(board.has_queenside_castling_rights(us))
    out[115] = float(board.has_kingside_castling_rights(us))
    out[116] = float(board.has_queenside_castling_rights(them))
    out[117] = float(board.has_kingside_castling_rights(them))
    out[NO_PROGRESS] = board.halfmove_clock / 100.0
    return out.T


def ply_fraction(plies, size: int):
    """Feature ``PLY_COUNT``: plies played / the variant's ply limit, clipped to 1 (numbers or arrays)."""
    return np.minimum(1.0, np.asarray(plies) / PLY_LIMITS[size]).astype(np.float32)


def legal_edges(board: chess.Board) -> tuple[list[chess.Move], np.ndarray]:
    """``board``'s legal moves and their edges."""
    size = board_size(board)
    moves = list(board.legal_moves)
    return moves, np.fromiter((move_to_edge(size, board, m) for m in moves), np.int64, count=len(moves))


def encode_graphs(boards: Sequence[chess.Board], size: int) -> np.ndarray:
    """(B, N * 119 + E) float32: node features then legal flags (module doc)."""
    graph = board_graph(size)
    out = np.zeros((len(boards), input_width(size)), np.float32)
    for i, board in enumerate(boards):
        if board_size(board) != size:
            raise ValueError(f"a {board_size(board)}x{board_size(board)} position given to the {size}x{size} "
                             f"graph encoding ({board.fen()})")
        out[i, :graph.nodes * NODE_FEATURES] = node_features(board).ravel()
        _, edges = legal_edges(board)
        out[i, graph.nodes * NODE_FEATURES + edges] = 1.0
    return out


def split_input(inputs, graph: BoardGraph):
    """(B, width) -> nodes (B, N, 119), legal (B, E); works on numpy arrays and torch tensors."""
    cut = graph.nodes * NODE_FEATURES
    return inputs[:, :cut].reshape(inputs.shape[0], graph.nodes, NODE_FEATURES), inputs[:, cut:]


def _position_key(board: chess.Board, size: int) -> bytes:
    """Equal keys mean equal inputs: the legal flags follow from the pieces, side to move and
    castling rights the node features hold, plus the en-passant square."""
    if board_size(board) != size:
        encode_graphs([board], size)  # raises the encoding's own error
    digest = hashlib.blake2b(node_features(board).tobytes(), digest_size=20)
    digest.update(bytes([64 if board.ep_square is None else board.ep_square]))
    return digest.digest()


def _square_tokens(board: chess.Board) -> np.ndarray | None:
    """8x8 nodes are squares of the mover's frame: mirrored for black, as lc0's tokens."""
    return np.arange(64) ^ 56 if board.turn == chess.BLACK else None


def vocabulary_uci(size: int) -> list[str]:
    """Each edge as UCI in the mover's frame of a white-to-move board (plain edges without suffix)."""
    graph = board_graph(size)
    squares = square_of_node(size, chess.WHITE)
    return [chess.Move(int(squares[s]), int(squares[r]), int(p) or None).uci()
            for s, r, p in zip(graph.senders, graph.receivers, graph.promotions)]


GRAPH_8X8 = Encoding(
    name="graph/alphazero-119-8x8",
    encode=lambda boards: encode_graphs(boards, 8),
    position_key=lambda board: _position_key(board, 8),
    vocabulary=lambda: vocabulary_uci(8),
    legal_moves=legal_edges,
    square_tokens=_square_tokens,
)

GRAPH_5X5 = Encoding(
    name="graph/alphazero-119-5x5",
    encode=lambda boards: encode_graphs(boards, 5),
    position_key=lambda board: _position_key(board, 5),
    vocabulary=lambda: vocabulary_uci(5),
    legal_moves=legal_edges,
    square_tokens=_square_tokens,  # not used: 5x5 maps are placed in real squares by the family
    board_size=5,
)

GRAPH_ENCODINGS = {8: GRAPH_8X8, 5: GRAPH_5X5}

__all__ = ["BLACK_TO_MOVE", "BOARD_SIZES", "GRAPH_5X5", "GRAPH_8X8", "GRAPH_ENCODINGS", "HISTORY_FEATURES",
           "NODE_FEATURES", "NO_PROGRESS", "PLY_COUNT", "board_size", "edge_policy_maps", "encode_graphs",
           "graph_for_width", "input_width", "legal_edges", "node_features", "ply_fraction", "split_input"]
