"""Giraffe's 363 hand-designed features (Lai 2015, section 4.1) and its move features (section 6.1).

The paper gives the parts and the total; the reference code (``ianfab/Giraffe`` at 053b736,
``ann/features_conv.cpp``, summarised in ``../shared/research/gateau_giraffe_data.md`` B2)
gives the exact groups and normalisations, which we follow except where the paper says
otherwise (each such place has a comment):

* global (15): piece counts, side to move, castling rights;
* piece-centric (220): king coordinates; per slot: exists, x, y, the rays a sliding piece can
  move along, its safe-move count and the lowest attacker / defender of its square;
* square-centric (128): the lowest-valued white and black attacker of every square.

The paper describes the board from White's side with a side-to-move flag. We describe it as
the side to move sees it (``board_features``: a position with Black to move is first mirrored,
``board.mirror()``), so "w" names the mover's pieces, "b" the opponent's, and ``stm`` is always 1;
this departs from the paper. Why: with White's view, a network must learn each position twice, once
per colour, and its errors differ between the two; 30 TD-Leaf iterations valued the start position
0.24 for White and its mirror 0.76 for Black, and trained networks failed the value sanity
suite's mirror checks by about 0.1. From the mover's side a position and its colour mirror have
equal features, so their values are equal exactly. "Control" of a
square by one side is (1.5 K - value of its least valuable attacker) / (2 K) with SEE values
(P 100, N/B 325, R 500, Q 975, K 1500 = K), and 0 when that side does not attack it.
Feature names (``FEATURE_NAMES``) say what each number is, e.g. ``w.rook1.ray.N``.
"""

from __future__ import annotations

from typing import Sequence

import chess
import numpy as np

from analysis.material import EXCHANGE_CENTIPAWNS

SEE_VALUE = {**EXCHANGE_CENTIPAWNS, chess.KING: 1500}  # the king is K of the control formula above
_KING_VALUE = SEE_VALUE[chess.KING]
_BY_VALUE = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING)
_SIDES = (("w", chess.WHITE), ("b", chess.BLACK))
# Piece counts divided by a typical maximum (reference code).
_COUNT_SCALE = {chess.QUEEN: 1.0, chess.ROOK: 2.0, chess.BISHOP: 2.0, chess.KNIGHT: 2.0, chess.PAWN: 8.0}
_COUNTED = (chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT, chess.PAWN)
# Ray directions as (file step, rank step); the paper's "how far along each direction".
DIRECTIONS = {"N": (0, 1), "NE": (1, 1), "E": (1, 0), "SE": (1, -1), "S": (0, -1), "SW": (-1, -1),
              "W": (-1, 0), "NW": (-1, 1)}
_RAYS = {chess.QUEEN: tuple(DIRECTIONS), chess.ROOK: ("N", "E", "S", "W"), chess.BISHOP: ("NE", "SE", "SW", "NW")}
# Safe-move counts are divided by the piece's most moves on an empty board (the code: queen / 16;
# it does not state the others, so these are ours).
_SAFE_SCALE = {chess.QUEEN: 16.0, chess.ROOK: 14.0, chess.BISHOP: 13.0, chess.KNIGHT: 8.0}
# Slots per side: the paper's list (1 queen, 2 rooks / bishops / knights, 8 pawns). Extra
# pieces after a promotion get no slot; the counts still score them (section 4.1).
_SLOTS = {chess.QUEEN: 1, chess.ROOK: 2, chess.BISHOP: 2, chess.KNIGHT: 2}
_NAMES = {chess.QUEEN: "queen", chess.ROOK: "rook", chess.BISHOP: "bishop", chess.KNIGHT: "knight"}


def _feature_names() -> tuple[list[str], list[str], list[str]]:
    glob = [f"{s}.count.{chess.piece_symbol(p).upper()}" for s, _ in _SIDES for p in _COUNTED]
    glob += ["stm", "w.castle.K", "w.castle.Q", "b.castle.K", "b.castle.Q"]
    # The code keeps the king coordinates with the global features; the paper's Figure 3 puts
    # piece lists (kings included) in the piece-centric group, so we follow the paper.
    piece = [f"{s}.king.{c}" for s, _ in _SIDES for c in ("x", "y")]
    for s, _ in _SIDES:
        for slot in range(1, 9):
            piece += [f"{s}.pawn{slot}.{f}" for f in ("exists", "x", "y", "wctl", "bctl")]
    for kind in (chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT):
        for s, _ in _SIDES:
            for slot in range(1, _SLOTS[kind] + 1):
                name = f"{s}.{_NAMES[kind]}{slot}"
                piece += [f"{name}.{f}" for f in ("exists", "x", "y")]
                piece += [f"{name}.ray.{d}" for d in _RAYS.get(kind, ())]
                piece += [f"{name}.{f}" for f in ("safe", "wctl", "bctl")]
            if kind == chess.ROOK:  # the code repeats the castling rights beside the rooks
                piece += [f"{s}.rook.castle.K", f"{s}.rook.castle.Q"]
    square = [f"{s}.ctl.{chess.square_name(sq)}" for s, _ in _SIDES for sq in chess.SQUARES]
    return glob, piece, square


GLOBAL_NAMES, PIECE_NAMES, SQUARE_NAMES = _feature_names()
FEATURE_NAMES: tuple[str, ...] = tuple(GLOBAL_NAMES + PIECE_NAMES + SQUARE_NAMES)
GLOBAL_SIZE, PIECE_SIZE, SQUARE_SIZE = len(GLOBAL_NAMES), len(PIECE_NAMES), len(SQUARE_NAMES)
BOARD_FEATURES = len(FEATURE_NAMES)
assert BOARD_FEATURES == 363, BOARD_FEATURES  # the paper's total
INDEX = {name: i for i, name in enumerate(FEATURE_NAMES)}


def control(value: int) -> float:
    """The control value of a square whose least valuable attacker is worth ``value`` (0: none)."""
    return 0.0 if value == 0 else (1.5 * _KING_VALUE - value) / (2 * _KING_VALUE)


def _bits(mask: int) -> np.ndarray:
    """A 64-bit square set as 64 booleans (a1 first)."""
    return np.unpackbits(np.array([mask], dtype="<u8").view(np.uint8), bitorder="little").astype(bool)


def attack_tables(board: chess.Board) -> tuple[np.ndarray, np.ndarray]:
    """(2, 64) SEE value of each side's least valuable attacker of each square (0: none) and
    (2, 64) how many of its pieces attack each square. Row 0 is White, row 1 Black.

    Pieces are visited most valuable first, so a square ends with its cheapest attacker.
    """
    low = np.zeros((2, 64), np.int32)
    count = np.zeros((2, 64), np.int32)
    for row, color in enumerate((chess.WHITE, chess.BLACK)):
        for kind in reversed(_BY_VALUE):
            for sq in chess.scan_forward(board.pieces_mask(kind, color)):
                bits = _bits(board.attacks_mask(sq))
                low[row, bits] = SEE_VALUE[kind]
                count[row] += bits
    return low, count


def _slot_pieces(board: chess.Board, kind: int, color: chess.Color) -> list[int | None]:
    """Squares of ``color``'s pieces of ``kind`` in their slots (None: empty slot).

    The paper assigns slots "based on position when possible". Rooks and knights: by file,
    then by rank from the owner's side; bishops: slot 1 is the bishop on the colour of the
    owner's queen's bishop (c1 / c8), slot 2 the other, a second bishop of one colour taking
    the free slot. These keep a piece in its slot as it moves and mirror with the board.
    """
    squares = sorted(board.pieces(kind, color),
                     key=lambda sq: (chess.square_file(sq), chess.square_rank(sq) ^ (0 if color else 7)))
    slots: list[int | None] = [None] * _SLOTS[kind]
    if kind == chess.BISHOP:
        own_dark = bool(chess.BB_DARK_SQUARES & chess.BB_SQUARES[chess.C1 if color else chess.C8])
        rest = []
        for sq in squares:
            index = 0 if bool(chess.BB_DARK_SQUARES & chess.BB_SQUARES[sq]) == own_dark else 1
            if slots[index] is None:
                slots[index] = sq
            else:
                rest.append(sq)
        for sq in rest:
            if None in slots:
                slots[slots.index(None)] = sq
        return slots
    for i, sq in enumerate(squares[:len(slots)]):
        slots[i] = sq
    return slots


def pawn_slots(files: Sequence[int]) -> list[int]:
    """Slot (0-7) of each pawn given its file: its own file, else the nearest free one.

    The paper: "if only a, b, g, h pawns are present, they will occupy the 1st, 2nd, 7th, and
    8th slots". Pawns are placed in the order given; a tie between two free files goes to the
    lower one.
    """
    taken = [False] * 8
    out = []
    for f in files:
        for d in range(8):
            choice = next((c for c in (f - d, f + d) if 0 <= c < 8 and not taken[c]), None)
            if choice is not None:
                taken[choice] = True
                out.append(choice)
                break
    return out


def _ray_length(board: chess.Board, sq: int, color: chess.Color, step: tuple[int, int]) -> int:
    """Squares the piece on ``sq`` can move to along ``step`` (a capture of the blocker included)."""
    f, r, n = chess.square_file(sq), chess.square_rank(sq), 0
    while True:
        f, r = f + step[0], r + step[1]
        if not (0 <= f < 8 and 0 <= r < 8):
            return n
        occupant = board.color_at(chess.square(f, r))
        if occupant is None:
            n += 1
            continue
        return n + (occupant != color)


def _safe_moves(board: chess.Board, sq: int, kind: int, color: chess.Color, low: np.ndarray,
                count: np.ndarray) -> int:
    """Moves of the piece on ``sq`` to squares it can hold (the reference code's rule).

    Safe: the opponent does not attack the destination, or its least valuable attacker is
    worth at least the mover and the mover's side attacks it twice (the piece and a defender).
    """
    own, them = (0, 1) if color else (1, 0)
    dest = _bits(board.attacks_mask(sq) & ~board.occupied_co[color])
    attacker = low[them, dest]
    safe = (attacker == 0) | ((attacker >= SEE_VALUE[kind]) & (count[own, dest] >= 2))
    return int(safe.sum())


_SIDE_INDEX = {
    s: {"counts": [INDEX[f"{s}.count.{chess.piece_symbol(p).upper()}"] for p in _COUNTED],
        "castle": [INDEX[f"{s}.castle.K"], INDEX[f"{s}.castle.Q"], INDEX[f"{s}.rook.castle.K"],
                   INDEX[f"{s}.rook.castle.Q"]],
        "king": INDEX[f"{s}.king.x"],
        "pawns": [INDEX[f"{s}.pawn{i}.exists"] for i in range(1, 9)],
        "slots": {kind: [INDEX[f"{s}.{_NAMES[kind]}{i}.exists"] for i in range(1, _SLOTS[kind] + 1)]
                  for kind in _SLOTS}}
    for s, _ in _SIDES
}
_SQUARES_START = GLOBAL_SIZE + PIECE_SIZE


def board_features(board: chess.Board) -> np.ndarray:
    """The 363 features of ``board`` (float32) as its side to move sees it: the mover is "w"."""
    return white_view_features(board if board.turn == chess.WHITE else board.mirror())


def white_view_features(board: chess.Board) -> np.ndarray:
    """The 363 features of ``board`` (float32) from White's side, in the order of ``FEATURE_NAMES``.

    Slot layout (see ``_feature_names``): exists, x, y, then for a piece its rays and
    safe-move count, then the white and black control of its square.
    """
    x = np.zeros(BOARD_FEATURES, np.float32)
    low, count = attack_tables(board)
    ctl = np.where(low == 0, 0.0, (1.5 * _KING_VALUE - low) / (2 * _KING_VALUE)).astype(np.float32)  # (2, 64)
    x[INDEX["stm"]] = float(board.turn == chess.WHITE)
    for s, color in _SIDES:
        at = _SIDE_INDEX[s]
        for i, p in zip(at["counts"], _COUNTED):
            x[i] = chess.popcount(board.pieces_mask(p, color)) / _COUNT_SCALE[p]
        k, q = board.has_kingside_castling_rights(color), board.has_queenside_castling_rights(color)
        x[at["castle"]] = (k, q, k, q)
        king = board.king(color)
        if king is not None:
            x[at["king"]] = chess.square_file(king) / 7
            x[at["king"] + 1] = chess.square_rank(king) / 7
        pawns = list(chess.scan_forward(board.pieces_mask(chess.PAWN, color)))
        for sq, slot in zip(pawns, pawn_slots([chess.square_file(sq) for sq in pawns])):
            base = at["pawns"][slot]
            x[base:base + 5] = (1.0, chess.square_file(sq) / 7, chess.square_rank(sq) / 7, ctl[0, sq], ctl[1, sq])
        for kind, bases in at["slots"].items():
            rays = _RAYS.get(kind, ())
            for base, sq in zip(bases, _slot_pieces(board, kind, color)):
                if sq is None:
                    continue
                x[base:base + 3] = (1.0, chess.square_file(sq) / 7, chess.square_rank(sq) / 7)
                for j, d in enumerate(rays):
                    x[base + 3 + j] = _ray_length(board, sq, color, DIRECTIONS[d]) / 7
                tail = base + 3 + len(rays)
                x[tail:tail + 3] = (_safe_moves(board, sq, kind, color, low, count) / _SAFE_SCALE[kind],
                                    ctl[0, sq], ctl[1, sq])
    x[_SQUARES_START:_SQUARES_START + 64] = ctl[0]
    x[_SQUARES_START + 64:] = ctl[1]
    return x
