"""Lc0 input planes, format ``INPUT_CLASSICAL_112_PLANE`` (lc0 enum value 1).

We follow lc0's ``EncodePositionForNN`` (``src/neural/encoder.cc``) for that
format exactly, with lc0's default history fill ``fen_only``:

====================  ==========================================================
planes                content
====================  ==========================================================
13*i + 0..5           our P N B R Q K in history step i (i = 0: current position)
13*i + 6..11          their P N B R Q K
13*i + 12             all ones if history position i occurred before in the game
104, 105              we may castle queenside, kingside (all ones)
106, 107              they may castle queenside, kingside
108                   all ones if black is to move
109                   rule-50 half-move counter, raw (lc0 feeds the raw count)
110                   zeros
111                   all ones
====================  ==========================================================

Every history board is written in the *current* mover's frame: for black to
move the board is mirrored vertically (a1 <-> a8) and colours swapped; it is
not rotated. Token ``t`` of the 64 x 112 token view is square ``t`` of that
frame (a1 = 0, h1 = 7, a8 = 56, h8 = 63).

History fill (``fen_only``): when the game's first position is not the
standard start position (a board set up from a FEN), the history steps older
than it repeat that first position; if it carries an en-passant square, the
double-pushed pawn is put back on its start square in those copies, as lc0
does. A game from the start position leaves missing history at zero.

The network divides plane 109 by 100 itself (the Chessformer paper, A-A);
the planes here stay exactly what lc0 would feed.

Rule-50 range: lc0 does not clamp the count (its FEN parser reads an ``int`` and
``EncodePositionForNN`` fills plane 109 with it as it is). Clamping here would
feed the network something lc0 never would and make two different inputs share
one cache key, so ``pack`` refuses (ValueError) a count outside 0..65535, the
range the 2-byte cache key holds. ``analysis.positions`` refuses FEN clocks
over 150 long before that, so user input never reaches this error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import chess
import numpy as np

INPUT_FORMAT = "lc0/INPUT_CLASSICAL_112_PLANE"
HISTORY = 8
PLANES = 112
AUX_BASE = 104
BLACK_TO_MOVE_PLANE = 108
RULE50_PLANE = 109
ROW_BYTES = PLANES * 8  # a packed row: each plane's bitboard as 8 little-endian bytes

_PIECE_ORDER = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING)
_START_BOARD_FEN = chess.STARTING_BOARD_FEN
_ALL = 0xFFFF_FFFF_FFFF_FFFF
# The cache key stores the rule-50 count in 2 bytes.
MAX_RULE50 = 0xFFFF


@dataclass(frozen=True)
class PackedPosition:
    """What the network sees, packed: 112 bitboards plus the rule-50 count.

    ``bits[p]`` is plane ``p`` as a 64-bit mask in the mover's frame (plane
    109 is zero here; its value is ``rule50``). Its bytes are the cache key
    for evaluations: two boards with equal keys get equal network outputs.
    """

    bits: np.ndarray  # (112,) uint64
    rule50: int
    black_to_move: bool

    def key(self) -> bytes:
        return self.bits.tobytes() + self.rule50.to_bytes(2, "little")


def _history_boards(board: chess.Board) -> tuple[list[chess.Board], list[bool]]:
    """Up to 8 boards (current first) and whether each occurred earlier in the game."""
    # Copying the whole move stack dominated pack() late in a game, and the walk
    # below rarely goes far back: copy a short tail first, and the full stack
    # only when the walk used up that tail with older moves left (same result).
    tail = HISTORY + board.halfmove_clock
    if tail < len(board.move_stack):
        walked = _walk_history(board.copy(stack=tail))
        if walked is not None:
            return walked
    return _walk_history(board.copy(stack=True), complete=True)


def _walk_history(scratch: chess.Board, complete: bool = False):
    """Pop back through ``scratch``'s stack; None when it ran out before the walk was done
    (unless ``complete``: the stack is the whole game)."""
    boards = [scratch.copy(stack=False)]
    keys = [scratch._transposition_key()]
    # Repetition flags need every key back to the oldest history board's last
    # irreversible move, even past step 7: nothing before that move can recur.
    while len(boards) < HISTORY or scratch.halfmove_clock > 0:
        if not scratch.move_stack:
            if not complete:
                return None
            break
        scratch.pop()
        if len(boards) < HISTORY:
            boards.append(scratch.copy(stack=False))
        keys.append(scratch._transposition_key())
    repeated = [keys[i] in keys[i + 1:] for i in range(len(boards))]
    return boards, repeated


def _piece_masks(board: chess.Board, us: chess.Color, mirror: bool) -> list[int]:
    masks = []
    for color in (us, not us):
        for piece_type in _PIECE_ORDER:
            bb = board.pieces_mask(piece_type, color)
            masks.append(chess.flip_vertical(bb) if mirror else bb)
    return masks


def _undo_double_push(masks: list[int], board: chess.Board, us: chess.Color, mirror: bool) -> list[int]:
    """lc0's fill for an en-passant FEN: the pawn that just double-pushed goes back."""
    ep = board.ep_square
    if ep is None:
        return masks
    pusher = not board.turn  # the side that just moved the pawn
    step = -8 if pusher == chess.WHITE else 8
    landed, origin = ep - step, ep + step  # e.g. ep e3: landed e4, origin e2
    if mirror:
        landed, origin = chess.square_mirror(landed), chess.square_mirror(origin)
    plane = 0 if pusher == us else 6
    masks = list(masks)
    masks[plane] = (masks[plane] & ~chess.BB_SQUARES[landed]) | chess.BB_SQUARES[origin]
    return masks


def pack(board: chess.Board) -> PackedPosition:
    """Pack ``board`` (with its move stack) into lc0's 112 planes."""
    if not 0 <= board.halfmove_clock <= MAX_RULE50:
        raise ValueError(f"half-move clock {board.halfmove_clock} is outside 0..{MAX_RULE50}, "
                         f"the range these planes encode")
    us = board.turn
    mirror = us == chess.BLACK
    bits = np.zeros(PLANES, dtype=np.uint64)
    boards, repeated = _history_boards(board)

    first = boards[-1]
    fill = len(boards) < HISTORY and not (
        first.board_fen() == _START_BOARD_FEN and first.turn == chess.WHITE
        and first.castling_rights == chess.BB_CORNERS
    )
    for i in range(HISTORY):
        if i < len(boards):
            masks = _piece_masks(boards[i], us, mirror)
            rep = repeated[i]
        elif fill:
            masks = _undo_double_push(_piece_masks(first, us, mirror), first, us, mirror)
            rep = repeated[-1]
        else:
            break
        bits[13 * i: 13 * i + 12] = masks
        bits[13 * i + 12] = _ALL if rep else 0

    them = not us
    castling = (
        board.has_queenside_castling_rights(us), board.has_kingside_castling_rights(us),
        board.has_queenside_castling_rights(them), board.has_kingside_castling_rights(them),
    )
    for offset, allowed in enumerate(castling):
        bits[AUX_BASE + offset] = _ALL if allowed else 0
    bits[BLACK_TO_MOVE_PLANE] = _ALL if us == chess.BLACK else 0
    bits[111] = _ALL
    return PackedPosition(bits=bits, rule50=board.halfmove_clock, black_to_move=mirror)


def bitboard_rows(bits: np.ndarray) -> np.ndarray:
    """(B, 112) uint64 bitboards -> (B, 896) uint8 packed rows (each plane little-endian)."""
    return bits.astype("<u8").view(np.uint8).reshape(len(bits), ROW_BYTES)


def unpack_planes(rows: np.ndarray, rule50) -> np.ndarray:
    """Packed rows (B, 896) uint8 and plane 109's values (B,) -> float32 planes (B, 112, 64), square
    index last. Every unpacking of lc0 planes (inference, the other input formats, training) is this."""
    planes = np.unpackbits(rows.reshape(len(rows), PLANES, 8), axis=-1, bitorder="little").astype(np.float32)
    planes[:, RULE50_PLANE, :] = np.asarray(rule50, np.float32)[:, None]
    return planes


def planes_from_packed(packed: Sequence[PackedPosition]) -> np.ndarray:
    """Unpack to float32 planes of shape (batch, 112, 64), square index last."""
    stacked = np.stack([p.bits for p in packed]) if packed else np.zeros((0, PLANES), np.uint64)
    return unpack_planes(bitboard_rows(stacked), [p.rule50 for p in packed])


def encode_planes(boards: Sequence[chess.Board]) -> np.ndarray:
    """Boards to lc0 planes, shape (batch, 112, 8, 8): [plane][rank][file], mover's frame."""
    return planes_from_packed([pack(b) for b in boards]).reshape(len(boards), PLANES, 8, 8)


def encode_tokens(boards: Sequence[chess.Board]) -> np.ndarray:
    """Boards to the 64-token view, shape (batch, 64, 112): token t = square t, mover's frame."""
    return tokens_from_packed([pack(b) for b in boards])


def tokens_from_packed(packed: Sequence[PackedPosition]) -> np.ndarray:
    return np.ascontiguousarray(planes_from_packed(packed).transpose(0, 2, 1))
