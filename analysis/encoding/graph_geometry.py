"""The static move graph of an n x n board (AlphaGateau, Rigaux & Kashima, section 4.2).

Squares are nodes, moves are edges. The edge set is every queen-like or
knight-like displacement that stays on the board, plus three parallel edges
(knight, bishop, rook underpromotion) for each forward pawn step onto the last
rank: 1,858 edges on 8x8 and 455 on 5x5, the same for every position. Only the
``legal`` flag changes with the position (``analysis.encoding.graph``).

Everything is in the mover's frame: node ``rank * n + file`` with rank 0 the
mover's back rank (the board is mirrored vertically for black, as lc0 does).
On 8x8 node t is therefore token t of the lc0 planes and square t of python-chess.

Edge features are the paper's Table 2 (15 of them). The public code builds 19
with a queen-promotion flag that duplicates the rook one (it tests
``underpromotion == 0``, which is pgx's rook); we follow the paper's 15 and set
the queen-promotion flag on the plain forward pawn edges onto the last rank.
Table 2's "white"/"black" pawn and king read here as mover/opponent, since the
features are seen from the side to move.

Castling: the paper's action goes two squares from the king's start square;
we mark the king-takes-own-rook edge instead (e1h1, e1a1), lc0's convention,
so that 8x8 edges and lc0's 1858 policy entries are one bijection of equal
moves and the training data and searches need no special case.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import chess
import numpy as np

from analysis.encoding.policy_index import POLICY_SIZE, vocabulary

_KNIGHT_STEPS = ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2))
_QUEEN_DIRECTIONS = ((0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1))
UNDERPROMOTIONS = (chess.KNIGHT, chess.BISHOP, chess.ROOK)

# Table 2 in the paper's order; "legal" is filled per position, the rest are static.
EDGE_FEATURES = (
    "legal", "d_file", "d_rank",
    "promotes_knight", "promotes_bishop", "promotes_rook", "promotes_queen",
    "mover_pawn", "opponent_pawn",
    "knight", "bishop", "rook", "queen",
    "mover_king", "opponent_king",
)
EDGE_FEATURE_COUNT = len(EDGE_FEATURES)  # 15
STATIC_EDGE_FEATURES = EDGE_FEATURES[1:]


@dataclass(frozen=True, eq=False)
class BoardGraph:
    """The static graph of one board size; arrays are read-only.

    ``senders``/``receivers`` (E,): from- and to-node of each edge.
    ``promotions`` (E,): the underpromotion piece of a parallel edge, else 0.
    ``static_features`` (E, 14): Table 2 without the legal flag.
    """

    size: int
    senders: np.ndarray
    receivers: np.ndarray
    promotions: np.ndarray
    static_features: np.ndarray
    castling: bool  # whether this variant has castling (and pawn double steps)

    @property
    def nodes(self) -> int:
        return self.size * self.size

    @property
    def edges(self) -> int:
        return len(self.senders)

    def edge_index(self) -> dict[tuple[int, int, int], int]:
        """(from node, to node, underpromotion piece or 0) -> edge."""
        return {(int(s), int(r), int(p)): e for e, (s, r, p) in
                enumerate(zip(self.senders, self.receivers, self.promotions))}


def _displacements(size: int, file: int, rank: int) -> list[tuple[int, int]]:
    """Every (to_file, to_rank) a queen or a knight reaches from (file, rank) on an empty board."""
    targets = set()
    for df, dr in _QUEEN_DIRECTIONS:
        f, r = file + df, rank + dr
        while 0 <= f < size and 0 <= r < size:
            targets.add((f, r))
            f, r = f + df, r + dr
    for df, dr in _KNIGHT_STEPS:
        f, r = file + df, rank + dr
        if 0 <= f < size and 0 <= r < size:
            targets.add((f, r))
    return sorted(targets, key=lambda fr: fr[1] * size + fr[0])


def _static_features(size: int, castling: bool, frm: tuple[int, int], to: tuple[int, int], promo: int) -> list[float]:
    (f0, r0), (f1, r1) = frm, to
    df, dr = f1 - f0, r1 - r0
    plain = promo == 0
    diagonal, orthogonal = abs(df) == abs(dr), df == 0 or dr == 0
    knight = {abs(df), abs(dr)} == {1, 2}
    step = max(abs(df), abs(dr)) == 1
    last = size - 1
    queen_promotion = plain and r0 == last - 1 and dr == 1 and abs(df) <= 1
    mover_pawn = r0 >= 1 and ((dr == 1 and abs(df) <= 1) or (castling and r0 == 1 and dr == 2 and df == 0))
    opponent_pawn = plain and r0 <= last - 1 and (
        (dr == -1 and abs(df) <= 1) or (castling and r0 == last - 1 and dr == -2 and df == 0))
    # Castling as king-takes-own-rook from e1 (mover) or e8 (opponent), module doc.
    castle = castling and f0 == 4 and dr == 0 and f1 in (0, 7)
    return [
        float(df), float(dr),
        float(promo == chess.KNIGHT), float(promo == chess.BISHOP), float(promo == chess.ROOK), float(queen_promotion),
        float(mover_pawn), float(opponent_pawn),
        float(plain and knight), float(plain and diagonal and not knight),
        float(plain and orthogonal), float(plain and (diagonal or orthogonal) and not knight),
        float(plain and (step or (castle and r0 == 0))), float(plain and (step or (castle and r0 == last))),
    ]


@lru_cache(maxsize=None)
def board_graph(size: int) -> BoardGraph:
    """The graph of an ``size`` x ``size`` board (castling and double steps only on 8x8)."""
    if size < 3:
        raise ValueError(f"a {size}x{size} board has no move graph")
    castling = size == 8
    rows: list[tuple[tuple[int, int], tuple[int, int], int]] = []
    for node in range(size * size):
        frm = (node % size, node // size)
        rows.extend((frm, to, 0) for to in _displacements(size, *frm))
    for file in range(size):
        for to_file in (file - 1, file, file + 1):
            if 0 <= to_file < size:
                rows.extend(((file, size - 2), (to_file, size - 1), piece) for piece in UNDERPROMOTIONS)
    senders = np.array([r * size + f for (f, r), _, _ in rows], np.int64)
    receivers = np.array([r * size + f for _, (f, r), _ in rows], np.int64)
    promotions = np.array([p for _, _, p in rows], np.int64)
    features = np.array([_static_features(size, castling, *row) for row in rows], np.float32)
    for array in (senders, receivers, promotions, features):
        array.setflags(write=False)
    return BoardGraph(size, senders, receivers, promotions, features, castling)


def node_of_square(size: int, square: int, turn: chess.Color) -> int:
    """The node (mover's frame) of a python-chess square; a 5x5 board sits in the a1-e5 corner."""
    file, rank = chess.square_file(square), chess.square_rank(square)
    if file >= size or rank >= size:
        raise ValueError(f"{chess.square_name(square)} is not on a {size}x{size} board")
    return (rank if turn == chess.WHITE else size - 1 - rank) * size + file


@lru_cache(maxsize=None)
def square_of_node(size: int, turn: chess.Color) -> np.ndarray:
    """(N,) the python-chess square of each node (inverse of ``node_of_square``)."""
    squares = np.array([chess.square(n % size, n // size if turn == chess.WHITE else size - 1 - n // size)
                        for n in range(size * size)], np.int64)
    squares.setflags(write=False)
    return squares


def move_to_edge(size: int, board: chess.Board, move: chess.Move) -> int:
    """The edge of a legal ``move``: a queen promotion is the plain edge, castling king-takes-rook."""
    to_square = move.to_square
    if board.is_castling(move) and not board.chess960:
        to_square = chess.square(7 if chess.square_file(to_square) > chess.square_file(move.from_square) else 0,
                                 chess.square_rank(to_square))
    piece = move.promotion if move.promotion in UNDERPROMOTIONS else 0
    key = (node_of_square(size, move.from_square, board.turn), node_of_square(size, to_square, board.turn), piece)
    try:
        return _edge_index(size)[key]
    except KeyError:
        raise ValueError(f"{move.uci()} is not an edge of the {size}x{size} graph") from None


@lru_cache(maxsize=None)
def _edge_index(size: int) -> dict[tuple[int, int, int], int]:
    return board_graph(size).edge_index()


@lru_cache(maxsize=1)
def edge_policy_maps() -> tuple[np.ndarray, np.ndarray]:
    """(edge -> lc0 policy index, policy index -> edge) for the 8x8 graph: inverse permutations.

    Both sides name the same move in the mover's frame. At promotions lc0 gives
    the queen its own entry and lets the plain entry mean a knight, while the
    graph's plain edge is the queen promotion (section 4.2); this map pairs them
    as pawn moves. A non-pawn move from the 7th to the 8th rank (Ra7a8) is lc0's
    plain entry but the graph's plain edge: ``policy_to_edges`` takes the board
    and gets those right too.
    """
    index = _edge_index(8)
    policy_to_edge = np.empty(POLICY_SIZE, np.int64)
    for i, (frm, to, promo) in enumerate(vocabulary()):
        piece = 0 if promo == chess.QUEEN else promo or (chess.KNIGHT if _promotion_step(frm, to) else 0)
        policy_to_edge[i] = index[(frm, to, piece)]
    edge_to_policy = np.empty_like(policy_to_edge)
    edge_to_policy[policy_to_edge] = np.arange(POLICY_SIZE)
    for array in (edge_to_policy, policy_to_edge):
        array.setflags(write=False)
    return edge_to_policy, policy_to_edge


def _promotion_step(frm: int, to: int) -> bool:
    return chess.square_rank(frm) == 6 and chess.square_rank(to) == 7 and \
        abs(chess.square_file(frm) - chess.square_file(to)) <= 1


def policy_to_edges(board: chess.Board, indices: np.ndarray) -> np.ndarray:
    """lc0 policy indices of ``board``'s moves -> their 8x8 edges (exact, see ``edge_policy_maps``)."""
    edges = edge_policy_maps()[1][np.asarray(indices, np.int64)].copy()
    entries = vocabulary()
    for k, i in enumerate(np.asarray(indices, np.int64)):
        frm, to, promo = entries[i]
        if promo is None and _promotion_step(frm, to):
            real = frm if board.turn == chess.WHITE else chess.square_mirror(frm)
            if board.piece_type_at(real) != chess.PAWN:
                edges[k] = _edge_index(8)[(frm, to, 0)]
    return edges
