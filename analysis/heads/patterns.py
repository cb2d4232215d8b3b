"""The attention patterns of the Chessformer paper (section V), as masks over key squares.

Everything here is in the mover's frame: a position with black to move is first mirrored
(``board.mirror()``: ranks flipped, colours swapped), so "own" is always white and a head's
label cannot depend on who is to move. ``masks(board)`` gives, for every pattern and query
square q, the key squares of the pattern as a (patterns, 64 queries, 64 keys) float32 array.
The query square itself belongs only to ``self``: the paper notes tokens rarely attend to
themselves, so the other patterns leave it out rather than count it as a hit.
"""

from __future__ import annotations

from functools import lru_cache

import chess
import numpy as np

PIECE_NAMES = {chess.QUEEN: "queen", chess.ROOK: "rook", chess.BISHOP: "bishop", chess.KNIGHT: "knight",
               chess.PAWN: "pawn", chess.KING: "king"}
MOVEMENT = ("knight-moves", "bishop-moves", "rook-moves", "queen-moves", "king-moves", "pawn-moves")
PIECES = tuple(f"{side}-{name}" for side in ("opponent", "own") for name in PIECE_NAMES.values())
OTHER = ("same-colour-squares", "opponent-pieces", "own-pieces", "reverse-movement", "self")
PATTERNS: tuple[str, ...] = MOVEMENT + PIECES + OTHER
UNLABELLED = "unlabelled"
LABELS: tuple[str, ...] = PATTERNS + (UNLABELLED,)  # the fixed vocabulary of head labels


def mover_frame(board: chess.Board) -> chess.Board:
    """The position as the side to move sees it: unchanged for white, mirrored for black."""
    return board if board.turn == chess.WHITE else board.mirror()


def to_mover_frame(maps: np.ndarray, board: chess.Board) -> np.ndarray:
    """(..., 64, 64) maps in real squares -> the mover's frame (both axes mirrored for black)."""
    if board.turn == chess.WHITE:
        return maps
    flip = np.arange(64) ^ 56
    return maps[..., flip, :][..., flip]


def _bits(mask: int) -> np.ndarray:
    return np.array([(mask >> s) & 1 for s in range(64)], dtype=np.float32)


def _pawn_targets(q: int) -> int:
    """Squares a pawn of either colour on q could move or capture to on an empty board."""
    rank = chess.square_rank(q)
    if rank in (0, 7):  # no pawn stands on the first or last rank
        return 0
    out = chess.BB_PAWN_ATTACKS[chess.WHITE][q] | chess.BB_PAWN_ATTACKS[chess.BLACK][q]
    for step, start in ((8, 1), (-8, 6)):
        out |= chess.BB_SQUARES[q + step]
        if rank == start:
            out |= chess.BB_SQUARES[q + 2 * step]
    return out


def _movement_targets(name: str, q: int) -> int:
    rays = {"bishop-moves": chess.BB_DIAG_ATTACKS[q][0], "rook-moves": chess.BB_RANK_ATTACKS[q][0]
            | chess.BB_FILE_ATTACKS[q][0]}
    rays["queen-moves"] = rays["bishop-moves"] | rays["rook-moves"]
    rays["knight-moves"], rays["king-moves"] = chess.BB_KNIGHT_ATTACKS[q], chess.BB_KING_ATTACKS[q]
    rays["pawn-moves"] = _pawn_targets(q)
    return rays[name]


@lru_cache(maxsize=1)
def static_masks() -> np.ndarray:
    """(movement patterns + same-colour + self, 64, 64): the patterns no position changes."""
    movement = [[_bits(_movement_targets(name, q)) for q in range(64)] for name in MOVEMENT]
    colour = [[_bits(chess.BB_LIGHT_SQUARES if chess.BB_SQUARES[q] & chess.BB_LIGHT_SQUARES
                     else chess.BB_DARK_SQUARES) for q in range(64)]]
    out = np.array(movement + colour, dtype=np.float32)
    out[:, np.arange(64), np.arange(64)] = 0.0
    return np.concatenate([out, np.eye(64, dtype=np.float32)[None]])


def support(attention_support: str | None) -> np.ndarray:
    """(64 queries, 64 keys): where a head can attend at all (``Capabilities.attention_support``).
    None: all 64 keys (dense attention); "moves": a graph network's edges, the squares a queen or
    knight move away from the query."""
    if attention_support is None:
        return np.ones((64, 64), dtype=np.float32)
    if attention_support == "moves":
        fixed = static_masks()
        return np.maximum(fixed[MOVEMENT.index("queen-moves")], fixed[MOVEMENT.index("knight-moves")])
    raise ValueError(f"unknown attention support {attention_support!r}")


def masks(board: chess.Board) -> np.ndarray:
    """(len(PATTERNS), 64, 64) masks for ``board`` in the mover's frame (``mover_frame``)."""
    seen = mover_frame(board)
    fixed = static_masks()
    rows = {name: fixed[i] for i, name in enumerate(MOVEMENT + ("same-colour-squares", "self"))}
    for colour, side in ((chess.BLACK, "opponent"), (chess.WHITE, "own")):
        for piece, name in PIECE_NAMES.items():
            rows[f"{side}-{name}"] = np.broadcast_to(_bits(seen.pieces_mask(piece, colour)), (64, 64))
        rows[f"{side}-pieces"] = np.broadcast_to(_bits(seen.occupied_co[colour]), (64, 64))
    rows["reverse-movement"] = np.stack([_bits(seen.attackers_mask(chess.WHITE, q) | seen.attackers_mask(chess.BLACK, q))
                                         for q in range(64)])
    out = np.array([rows[name] for name in PATTERNS], dtype=np.float32)
    keep_self = PATTERNS.index("self")
    diagonal = out[:, np.arange(64), np.arange(64)]
    diagonal[np.arange(len(PATTERNS)) != keep_self] = 0.0
    out[:, np.arange(64), np.arange(64)] = diagonal
    return out
