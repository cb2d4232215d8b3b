"""The 363 board features compiled with numba, from python-chess's bitboards.

``features.board_features`` is the readable reference: Python loops over pieces and squares,
too slow for a search that evaluates about one position per node. This module computes the
same numbers (``tests/test_giraffe_compiled.py`` checks them equal on the STS suite and on
random game positions) in compiled loops over a 64-square board. The layout (where each number goes) is taken from the reference's
``INDEX``, so the two cannot drift apart.
"""

from __future__ import annotations

import chess
import numba
import numpy as np

from analysis.encoding.giraffe.features import (_COUNT_SCALE, _COUNTED, _RAYS, _SAFE_SCALE,
                                                BOARD_FEATURES, DIRECTIONS, GLOBAL_SIZE, INDEX,
                                                PIECE_SIZE, SEE_VALUE, _SIDE_INDEX)

_SIDE_NAMES = ("w", "b")
# Piece kinds as python-chess numbers them: 1 pawn ... 6 king (index 0 unused).
_SEE = np.array([0] + [SEE_VALUE[k] for k in range(1, 7)], np.int64)
_KING_VALUE = SEE_VALUE[chess.KING]
_STEPS = np.array([DIRECTIONS[d] for d in DIRECTIONS], np.int64)  # (8, 2) file, rank steps
_DIRECTION_NUMBER = {d: i for i, d in enumerate(DIRECTIONS)}
_KNIGHT = np.array([(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)], np.int64)
_SLIDES = {chess.BISHOP: ("NE", "SE", "SW", "NW"), chess.ROOK: ("N", "E", "S", "W"),
           chess.QUEEN: tuple(DIRECTIONS)}

# Layout, per side (row 0 White, row 1 Black).
_COUNT_AT = np.array([_SIDE_INDEX[s]["counts"] for s in _SIDE_NAMES], np.int64)      # (2, 5)
_COUNT_KIND = np.array(_COUNTED, np.int64)
_COUNT_DIV = np.array([_COUNT_SCALE[k] for k in _COUNTED], np.float64)
_CASTLE_AT = np.array([_SIDE_INDEX[s]["castle"] for s in _SIDE_NAMES], np.int64)     # (2, 4)
_KING_AT = np.array([_SIDE_INDEX[s]["king"] for s in _SIDE_NAMES], np.int64)
_PAWN_AT = np.array([_SIDE_INDEX[s]["pawns"] for s in _SIDE_NAMES], np.int64)        # (2, 8)
# Slotted kinds in python-chess numbers, their slot bases (-1: no such slot) and rays.
_SLOT_KIND = np.array([chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN], np.int64)
_SLOT_AT = np.full((2, 4, 2), -1, np.int64)
for _row, _s in enumerate(_SIDE_NAMES):
    for _j, _kind in enumerate(_SLOT_KIND):
        for _i, _base in enumerate(_SIDE_INDEX[_s]["slots"][int(_kind)]):
            _SLOT_AT[_row, _j, _i] = _base
_RAY_DIRS = np.full((4, 8), -1, np.int64)  # direction numbers of each slotted kind's rays
for _j, _kind in enumerate(_SLOT_KIND):
    for _i, _d in enumerate(_RAYS.get(int(_kind), ())):
        _RAY_DIRS[_j, _i] = _DIRECTION_NUMBER[_d]
_RAY_COUNT = np.array([len(_RAYS.get(int(k), ())) for k in _SLOT_KIND], np.int64)
_SAFE_DIV = np.array([_SAFE_SCALE[int(k)] for k in _SLOT_KIND], np.float64)
# Directions each kind slides along (for attacks), -1 padded.
_SLIDE_DIRS = np.full((7, 8), -1, np.int64)
for _kind, _dirs in _SLIDES.items():
    for _i, _d in enumerate(_dirs):
        _SLIDE_DIRS[_kind, _i] = _DIRECTION_NUMBER[_d]
_STM_AT = INDEX["stm"]
_SQUARES_AT = GLOBAL_SIZE + PIECE_SIZE
# Bishop slot 1 is the bishop on the colour of the owner's c1 / c8 square.
_OWN_DARK = np.array([bool(chess.BB_DARK_SQUARES & chess.BB_SQUARES[sq]) for sq in (chess.C1, chess.C8)])


@numba.njit(cache=True)
def _mailbox(bitboards: np.ndarray, kind: np.ndarray, side: np.ndarray) -> None:
    """kind[sq] 0 (empty) or 1-6, side[sq] 0 White / 1 Black / -1 empty, from the 8 bitboards."""
    for sq in range(64):
        bit = np.uint64(1) << np.uint64(sq)
        kind[sq] = 0
        side[sq] = -1
        for k in range(6):
            if bitboards[k] & bit:
                kind[sq] = k + 1
        if bitboards[6] & bit:
            side[sq] = 0
        elif bitboards[7] & bit:
            side[sq] = 1


@numba.njit(cache=True)
def _attacks(sq: int, kind: np.ndarray, side: np.ndarray, out: np.ndarray) -> int:
    """The squares the piece on ``sq`` attacks (as python-chess's ``attacks_mask``) into ``out``; their number."""
    f, r, k, n = sq % 8, sq // 8, kind[sq], 0
    if k == 1:
        dr = 1 if side[sq] == 0 else -1
        for df in (-1, 1):
            tf, tr = f + df, r + dr
            if 0 <= tf < 8 and 0 <= tr < 8:
                out[n] = tr * 8 + tf
                n += 1
    elif k == 2 or k == 6:
        for i in range(8):
            if k == 2:
                tf, tr = f + _KNIGHT[i, 0], r + _KNIGHT[i, 1]
            else:
                tf, tr = f + _STEPS[i, 0], r + _STEPS[i, 1]
            if 0 <= tf < 8 and 0 <= tr < 8:
                out[n] = tr * 8 + tf
                n += 1
    else:
        for i in range(8):
            d = _SLIDE_DIRS[k, i]
            if d < 0:
                break
            tf, tr = f + _STEPS[d, 0], r + _STEPS[d, 1]
            while 0 <= tf < 8 and 0 <= tr < 8:
                out[n] = tr * 8 + tf
                n += 1
                if kind[tr * 8 + tf] != 0:
                    break
                tf, tr = tf + _STEPS[d, 0], tr + _STEPS[d, 1]
    return n


@numba.njit(cache=True)
def _ray_length(sq: int, d: int, side: np.ndarray) -> int:
    """Squares the piece on ``sq`` can move to along direction ``d`` (capturing the blocker included)."""
    f, r, n = sq % 8 + _STEPS[d, 0], sq // 8 + _STEPS[d, 1], 0
    while 0 <= f < 8 and 0 <= r < 8:
        occupant = side[r * 8 + f]
        if occupant < 0:
            n += 1
        else:
            return n + (1 if occupant != side[sq] else 0)
        f, r = f + _STEPS[d, 0], r + _STEPS[d, 1]
    return n


@numba.njit(cache=True)
def _slot_squares(kind: np.ndarray, side: np.ndarray, want: int, row: int, slots: np.ndarray) -> None:
    """Squares of side ``row``'s pieces of ``want`` in their slots (-1: empty), as the reference's
    ``_slot_pieces``: by file, then rank from the owner's side; bishops by square colour."""
    flip = 0 if row == 0 else 7
    found = np.empty(16, np.int64)
    keys = np.empty(16, np.int64)
    n = 0
    for sq in range(64):
        if kind[sq] == want and side[sq] == row and n < 16:
            key = (sq % 8) * 8 + ((sq // 8) ^ flip)
            i = n  # insertion sort by key (the reference's sort is stable; keys are distinct)
            while i > 0 and keys[i - 1] > key:
                keys[i] = keys[i - 1]
                found[i] = found[i - 1]
                i -= 1
            keys[i] = key
            found[i] = sq
            n += 1
    slots[0] = -1
    slots[1] = -1
    if want == 3:
        rest = np.empty(16, np.int64)
        m = 0
        for i in range(n):
            sq = found[i]
            dark = ((sq % 8) + (sq // 8)) % 2 == 0
            index = 0 if dark == _OWN_DARK[row] else 1
            if slots[index] < 0:
                slots[index] = sq
            else:
                rest[m] = sq
                m += 1
        for i in range(m):
            if slots[0] < 0:
                slots[0] = rest[i]
            elif slots[1] < 0:
                slots[1] = rest[i]
        return
    for i in range(min(n, 2)):
        slots[i] = found[i]


@numba.njit(cache=True)
def _control(low: int) -> float:
    return 0.0 if low == 0 else (1.5 * _KING_VALUE - low) / (2 * _KING_VALUE)


@numba.njit(cache=True)
def _flip_ranks(bb: np.uint64) -> np.uint64:
    """A bitboard mirrored top to bottom (``chess.flip_vertical``): a byte swap."""
    eight, sixteen, thirty_two = np.uint64(8), np.uint64(16), np.uint64(32)
    bb = ((bb >> eight) & np.uint64(0x00FF00FF00FF00FF)) | ((bb & np.uint64(0x00FF00FF00FF00FF)) << eight)
    bb = ((bb >> sixteen) & np.uint64(0x0000FFFF0000FFFF)) | ((bb & np.uint64(0x0000FFFF0000FFFF)) << sixteen)
    return (bb >> thirty_two) | (bb << thirty_two)


@numba.njit(cache=True)
def features_into(x: np.ndarray, bitboards: np.ndarray, flags: np.ndarray) -> None:
    """``features.board_features``: the board as its side to move sees it (Black's mirrored)."""
    if flags[0] == 1:
        _white_view_into(x, bitboards, flags)
        return
    mirrored = np.empty(8, np.uint64)
    for k in range(6):
        mirrored[k] = _flip_ranks(bitboards[k])
    mirrored[6], mirrored[7] = _flip_ranks(bitboards[7]), _flip_ranks(bitboards[6])
    mirrored_flags = np.empty(7, np.int64)
    mirrored_flags[0] = 1
    mirrored_flags[1:3], mirrored_flags[3:5] = flags[3:5], flags[1:3]
    mirrored_flags[5] = flags[6] ^ 56 if flags[6] >= 0 else -1
    mirrored_flags[6] = flags[5] ^ 56 if flags[5] >= 0 else -1
    _white_view_into(x, mirrored, mirrored_flags)


@numba.njit(cache=True)
def _white_view_into(x: np.ndarray, bitboards: np.ndarray, flags: np.ndarray) -> None:
    """Write the 363 features into ``x`` (float32, zeroed here).

    bitboards: uint64 pawns, knights, bishops, rooks, queens, kings, White, Black.
    flags: side to move (1 White), castling rights wK, wQ, bK, bQ (as python-chess's
    ``has_*_castling_rights``), White and Black king squares (-1: none).
    """
    x[:] = 0.0
    kind = np.empty(64, np.int64)
    side = np.empty(64, np.int64)
    _mailbox(bitboards, kind, side)
    buf = np.empty(32, np.int64)
    low, count = _attackers(kind, side, buf)
    ctl = np.empty((2, 64), np.float32)
    for row in range(2):
        for sq in range(64):
            ctl[row, sq] = _control(low[row, sq])
    x[_STM_AT] = flags[0]
    for row in range(2):
        _side_features(x, row, kind, side, flags)
        _pawn_features(x, row, kind, side, ctl)
        _piece_features(x, row, kind, side, low, count, ctl, buf)
    for sq in range(64):
        x[_SQUARES_AT + sq] = ctl[0, sq]
        x[_SQUARES_AT + 64 + sq] = ctl[1, sq]


@numba.njit(cache=True)
def _attackers(kind: np.ndarray, side: np.ndarray, buf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per side and square: the SEE value of its least valuable attacker (0: none) and how many attack it."""
    low = np.zeros((2, 64), np.int64)
    count = np.zeros((2, 64), np.int64)
    for sq in range(64):
        if kind[sq] == 0:
            continue
        row, value = side[sq], _SEE[kind[sq]]
        for i in range(_attacks(sq, kind, side, buf)):
            t = buf[i]
            count[row, t] += 1
            if low[row, t] == 0 or value < low[row, t]:
                low[row, t] = value
    return low, count


@numba.njit(cache=True)
def _side_features(x: np.ndarray, row: int, kind: np.ndarray, side: np.ndarray, flags: np.ndarray) -> None:
    """One side's piece counts, castling rights and king square."""
    for j in range(_COUNT_KIND.shape[0]):
        n = 0
        for sq in range(64):
            if kind[sq] == _COUNT_KIND[j] and side[sq] == row:
                n += 1
        x[_COUNT_AT[row, j]] = n / _COUNT_DIV[j]
    for j in range(4):
        x[_CASTLE_AT[row, j]] = flags[1 + 2 * row + j % 2]
    king = flags[5 + row]
    if king >= 0:
        x[_KING_AT[row]] = (king % 8) / 7
        x[_KING_AT[row] + 1] = (king // 8) / 7


@numba.njit(cache=True)
def _pawn_features(x: np.ndarray, row: int, kind: np.ndarray, side: np.ndarray, ctl: np.ndarray) -> None:
    """One side's pawns, each in the free slot nearest its file (the reference's order)."""
    taken = np.zeros(8, np.bool_)
    placed = 0
    for sq in range(64):  # ascending squares, as the reference scans them
        if kind[sq] != 1 or side[sq] != row or placed == 8:
            continue
        f = sq % 8
        for d in range(8):
            slot = -1
            if f - d >= 0 and not taken[f - d]:
                slot = f - d
            elif f + d < 8 and not taken[f + d]:
                slot = f + d
            if slot >= 0:
                taken[slot] = True
                placed += 1
                base = _PAWN_AT[row, slot]
                x[base] = 1.0
                x[base + 1] = f / 7
                x[base + 2] = (sq // 8) / 7
                x[base + 3] = ctl[0, sq]
                x[base + 4] = ctl[1, sq]
                break


@numba.njit(cache=True)
def _piece_features(x: np.ndarray, row: int, kind: np.ndarray, side: np.ndarray, low: np.ndarray,
                    count: np.ndarray, ctl: np.ndarray, buf: np.ndarray) -> None:
    """One side's pieces in their slots: square, ray lengths, safe moves, control of the square."""
    them = 1 - row
    slots = np.empty(2, np.int64)
    for j in range(_SLOT_KIND.shape[0]):
        _slot_squares(kind, side, _SLOT_KIND[j], row, slots)
        for i in range(2):
            base, sq = _SLOT_AT[row, j, i], slots[i]
            if base < 0 or sq < 0:
                continue
            x[base] = 1.0
            x[base + 1] = (sq % 8) / 7
            x[base + 2] = (sq // 8) / 7
            for ray in range(_RAY_COUNT[j]):
                x[base + 3 + ray] = _ray_length(sq, _RAY_DIRS[j, ray], side) / 7
            safe = 0
            for i2 in range(_attacks(sq, kind, side, buf)):
                t = buf[i2]
                if side[t] == row:
                    continue
                a = low[them, t]
                if a == 0 or (a >= _SEE[kind[sq]] and count[row, t] >= 2):
                    safe += 1
            tail = base + 3 + _RAY_COUNT[j]
            x[tail] = safe / _SAFE_DIV[j]
            x[tail + 1] = ctl[0, sq]
            x[tail + 2] = ctl[1, sq]


def board_arrays(board: chess.Board) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's inputs for ``board``: (8,) uint64 bitboards and (7,) int64 flags."""
    black, white = board.occupied_co  # indexed by chess.BLACK (0), chess.WHITE (1)
    bitboards = np.array((board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
                          white, black), np.uint64)
    wk, bk = board.king(chess.WHITE), board.king(chess.BLACK)
    if board.castling_rights:  # python-chess's own rules (king and rook on their squares)
        castling = (board.has_kingside_castling_rights(chess.WHITE), board.has_queenside_castling_rights(chess.WHITE),
                    board.has_kingside_castling_rights(chess.BLACK), board.has_queenside_castling_rights(chess.BLACK))
    else:
        castling = (False, False, False, False)
    flags = np.array((board.turn, *castling, -1 if wk is None else wk, -1 if bk is None else bk), np.int64)
    return bitboards, flags


def board_features_compiled(board: chess.Board) -> np.ndarray:
    """``features.board_features(board)``, compiled."""
    x = np.empty(BOARD_FEATURES, np.float32)
    features_into(x, *board_arrays(board))
    return x
