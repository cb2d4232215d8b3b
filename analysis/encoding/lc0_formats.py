"""lc0's input formats beyond the classical one, their canonical transform, and each format as a
registered encoding (``BY_INPUT_FORMAT``).

``INPUT_CLASSICAL_112_PLANE`` (1) is ``analysis.encoding.lc0_planes``, used as
is. The others follow lc0's ``EncodePositionForNN`` (``src/neural/encoder.cc``):

- 2 CASTLING_PLANE: planes 104/105 hold the rook squares with queenside /
  kingside rights (ours on rank 1, theirs on rank 8), 106/107 are zero.
- 3 CANONICALIZATION: plane 108 is the en-passant bitboard (a bit on rank 8
  at the double-pushed pawn's file) instead of side to move; history stops at
  a castling change, at a past en-passant position and after a position with
  a zero rule-50 clock; with no castling rights the board is flipped,
  mirrored and transposed to a canonical orientation (``choose_transform``).
- 4 HECTOPLIES: as 3, with plane 109 = clock / 100. 132 adds plane 110 = ones
  for black to move (Armageddon).
- 5 CANONICALIZATION_V2 (133 Armageddon): as 4, but past positions are kept
  only if they are repetitions. lc0 loops forever on a FEN with a non-zero
  clock and no moves (its skip loop never meets a zero clock); here the walk
  stops when the game's known history ends.

The network sees the transformed board; its policy and attention maps are in
that frame, and ``square_map`` takes real squares there. Every encoding gives the
registry's token layout (B, 64, 112): token t holds square t of the network's frame
(lc0's planes transposed); the classical format's is ``LC0_PLANES`` itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Sequence

import chess
import numpy as np

import analysis.encoding.lc0_planes as lc0_planes
from analysis.encoding.lc0 import LC0_PLANES
from analysis.encoding.policy_index import move_to_index, vocabulary, vocabulary_uci
from analysis.encoding.registry import Encoding

FLIP, MIRROR, TRANSPOSE = 1, 2, 4  # lc0's FlipTransform, MirrorTransform, TransposeTransform
_ALL = 0xFFFF_FFFF_FFFF_FFFF
_FILES_A_TO_D = 0x0F0F0F0F0F0F0F0F
_UPPER_HALF = 0xFFFFFFFF00000000
_TRANSPOSE_TRIANGLE, _DIAGONAL = 0xE0C08000, 0x10204080
ARMAGEDDON = (132, 133)
V2 = (5, 133)
CLASSICAL = 1
# lc0's NetworkFormat.input values (proto/net.proto) and their names.
INPUT_FORMATS = {CLASSICAL: "INPUT_CLASSICAL_112_PLANE", 2: "INPUT_112_WITH_CASTLING_PLANE",
                 3: "INPUT_112_WITH_CANONICALIZATION", 4: "INPUT_112_WITH_CANONICALIZATION_HECTOPLIES",
                 132: "INPUT_112_WITH_CANONICALIZATION_HECTOPLIES_ARMAGEDDON",
                 5: "INPUT_112_WITH_CANONICALIZATION_V2", 133: "INPUT_112_WITH_CANONICALIZATION_V2_ARMAGEDDON"}


@dataclass(frozen=True)
class Encoded:
    """One position's planes: 112 bitboards (plane 109 empty), plane 109's value, the transform used."""

    bits: np.ndarray  # (112,) uint64
    rule50: float
    transform: int
    black_to_move: bool


def apply_transform(mask: int, transform: int) -> int:
    """lc0's order: flip files, then mirror ranks, then transpose (anti-diagonal reflection)."""
    if transform & FLIP:
        mask = chess.flip_horizontal(mask)
    if transform & MIRROR:
        mask = chess.flip_vertical(mask)
    if transform & TRANSPOSE:
        mask = chess.flip_anti_diagonal(mask)
    return mask


def _compare_transposing(mask: int, transform: int) -> int:
    value = apply_transform(mask, transform & (FLIP | MIRROR))
    alternative = chess.flip_anti_diagonal(value)
    return (value > alternative) - (value < alternative)


def choose_transform(bits: Sequence[int]) -> int:
    """lc0's ``ChooseTransform`` on the untransformed masks (canonical formats only)."""
    if bits[104] | bits[105]:
        return 0
    king, transform = bits[5], 0
    if king & _FILES_A_TO_D:
        transform, king = FLIP, chess.flip_horizontal(king)
    if bits[0] | bits[6]:
        return transform
    if king & _UPPER_HALF:
        transform, king = transform | MIRROR, chess.flip_vertical(king)
    if king & _TRANSPOSE_TRIANGLE:
        return transform | TRANSPOSE
    if king & _DIAGONAL:
        ours, theirs = (int(np.bitwise_or.reduce(bits[s:s + 6])) for s in (0, 6))
        for mask in (ours | theirs, ours, bits[5] | bits[11], bits[4] | bits[10], bits[3] | bits[9],
                     bits[1] | bits[7], bits[2] | bits[8]):
            outcome = _compare_transposing(int(mask), transform)
            if outcome:
                return transform | (TRANSPOSE if outcome > 0 else 0)
    return transform


def _walk(board: chess.Board, depth: int) -> tuple[list[chess.Board], list[bool], bool]:
    """Up to ``depth`` positions, newest first, their repetition flags, and whether the stack ran out."""
    scratch = board.copy(stack=True)
    boards, keys = [scratch.copy(stack=False)], [scratch._transposition_key()]
    while scratch.move_stack and (len(boards) < depth or scratch.halfmove_clock > 0):
        scratch.pop()
        if len(boards) < depth:
            boards.append(scratch.copy(stack=False))
        keys.append(scratch._transposition_key())
    repeated = [keys[i] in keys[i + 1:] for i in range(len(boards))]
    return boards, repeated, not scratch.move_stack


def _castling_masks(board: chess.Board, us: chess.Color) -> tuple[int, int]:
    """Planes 104/105: rook squares with queenside / kingside rights, mover's frame."""
    queenside = kingside = 0
    for color, rank in ((us, 0), (not us, 7)):
        if board.has_queenside_castling_rights(color):
            queenside |= chess.BB_SQUARES[chess.square(0, rank)]
        if board.has_kingside_castling_rights(color):
            kingside |= chess.BB_SQUARES[chess.square(7, rank)]
    return queenside, kingside


def _en_passant(board: chess.Board) -> int:
    """lc0 marks en passant only where a pawn could take: a bit on rank 8 at that file."""
    if board.ep_square is None or not board.has_pseudo_legal_en_passant():
        return 0
    return chess.BB_SQUARES[56 + chess.square_file(board.ep_square)]


def _history(board: chess.Board, input_format: int, bits: np.ndarray) -> None:
    """Fill the 8 x 13 history planes as lc0 does for ``input_format`` (2 and up)."""
    canonical, skip = input_format >= 3, input_format in V2
    us, mirror = board.turn, board.turn == chess.BLACK
    boards, repeated, complete = _walk(board, 8 if not skip else 8 + board.halfmove_clock)
    first = boards[-1]
    slot = 0
    for idx in range(max(len(boards), 8 + len(boards))):
        if slot == 8:
            break
        filled = idx >= len(boards)
        if filled and (not complete or _is_start(first)):
            break
        position, rep = (first, repeated[-1]) if filled else (boards[idx], repeated[idx])
        if canonical and position.castling_rights != board.castling_rights:
            break
        if canonical and idx > 0 and _en_passant(position):
            break
        if skip and not rep and slot > 0:
            if position.halfmove_clock == 0 or filled:  # filled: lc0 would loop here forever
                break
            continue
        masks = lc0_planes._piece_masks(position, us, mirror)
        if filled:
            masks = lc0_planes._undo_double_push(masks, position, us, mirror)
        bits[13 * slot:13 * slot + 12] = masks
        bits[13 * slot + 12] = _ALL if rep else 0
        slot += 1
        if canonical and position.halfmove_clock == 0:
            break


def _is_start(board: chess.Board) -> bool:
    return (board.board_fen() == chess.STARTING_BOARD_FEN and board.turn == chess.WHITE
            and board.castling_rights == chess.BB_CORNERS)


def encode_position(board: chess.Board, input_format: int) -> Encoded:
    """One board (with its move stack) in lc0 input format ``input_format``."""
    if input_format == CLASSICAL:
        packed = lc0_planes.pack(board)
        return Encoded(packed.bits, float(packed.rule50), 0, packed.black_to_move)
    if not 0 <= board.halfmove_clock <= lc0_planes.MAX_RULE50:
        raise ValueError(f"half-move clock {board.halfmove_clock} is outside 0..{lc0_planes.MAX_RULE50}")
    bits = np.zeros(lc0_planes.PLANES, dtype=np.uint64)
    _history(board, input_format, bits)
    black = board.turn == chess.BLACK
    bits[104], bits[105] = _castling_masks(board, board.turn)
    if input_format >= 3:
        bits[lc0_planes.BLACK_TO_MOVE_PLANE] = _en_passant(board)  # the canonical formats' en-passant plane
    elif black:
        bits[lc0_planes.BLACK_TO_MOVE_PLANE] = _ALL
    if input_format in ARMAGEDDON and black:
        bits[110] = _ALL
    bits[111] = _ALL
    clock = np.float32(board.halfmove_clock)
    rule50 = float(clock / np.float32(100)) if input_format >= 4 else float(clock)
    transform = choose_transform([int(b) for b in bits]) if input_format >= 3 else 0
    if transform:
        for p in range(lc0_planes.RULE50_PLANE):
            if bits[p] not in (0, _ALL):
                bits[p] = apply_transform(int(bits[p]), transform)
    return Encoded(bits, rule50, transform, black)


def planes(encoded: Sequence[Encoded]) -> np.ndarray:
    """Float32 planes (B, 112, 64), square index last, network frame."""
    stacked = np.stack([e.bits for e in encoded]) if encoded else np.zeros((0, lc0_planes.PLANES), np.uint64)
    return lc0_planes.unpack_planes(lc0_planes.bitboard_rows(stacked), [e.rule50 for e in encoded])


def encode_boards(boards: Sequence[chess.Board], input_format: int) -> tuple[np.ndarray, list[Encoded]]:
    encoded = [encode_position(b, input_format) for b in boards]
    return planes(encoded), encoded


def _square(square: int, transform: int) -> int:
    return apply_transform(chess.BB_SQUARES[square], transform).bit_length() - 1


def square_map(board: chess.Board, transform: int) -> np.ndarray:
    """(64,) network-frame square of each real square (a1 = 0 ... h8 = 63)."""
    mirror = board.turn == chess.BLACK
    return np.array([_square(chess.square_mirror(s) if mirror else s, transform) for s in range(64)], np.int64)


@lru_cache(maxsize=1)
def _index_of() -> dict[tuple[int, int, int | None], int]:
    return {entry: i for i, entry in enumerate(vocabulary())}


def move_indices(board: chess.Board, moves: Sequence[chess.Move], transform: int) -> np.ndarray:
    """Policy indices of ``moves`` in the network's (transformed) frame."""
    plain = [move_to_index(board, m) for m in moves]
    if not transform:
        return np.asarray(plain, np.int64)
    entries = vocabulary()
    return np.asarray([_index_of()[(_square(entries[i][0], transform), _square(entries[i][1], transform),
                                    entries[i][2])] for i in plain], np.int64)


# -- what an encodings registry needs per input format (boards only, no network) ---------------

def encoding_name(input_format: int) -> str:
    """The registered encoding's name, e.g. ``lc0/INPUT_CLASSICAL_112_PLANE``."""
    return f"lc0/{INPUT_FORMATS[input_format]}"


def position_key(board: chess.Board, input_format: int) -> bytes:
    """Equal keys mean equal network inputs (the transformed planes and plane 109's value)."""
    encoded = encode_position(board, input_format)
    return encoded.bits.tobytes() + np.float32(encoded.rule50).tobytes()


def legal_moves(board: chess.Board, input_format: int) -> tuple[list[chess.Move], np.ndarray]:
    """Legal moves and their policy indices in the network's frame."""
    moves = list(board.legal_moves)
    return moves, move_indices(board, moves, encode_position(board, input_format).transform)


def square_tokens(board: chess.Board, input_format: int) -> np.ndarray:
    """For each real square, the token (network-frame square) that holds it."""
    return square_map(board, encode_position(board, input_format).transform)


def encode(boards: Sequence[chess.Board], input_format: int) -> np.ndarray:
    """(B, 64, 112) float32 tokens in the network's frame."""
    stacked, _ = encode_boards(boards, input_format)
    return np.ascontiguousarray(stacked.transpose(0, 2, 1))


def _encoding(input_format: int) -> Encoding:
    return Encoding(
        name=encoding_name(input_format),
        encode=partial(encode, input_format=input_format),
        position_key=partial(position_key, input_format=input_format),
        vocabulary=vocabulary_uci,
        legal_moves=partial(legal_moves, input_format=input_format),
        square_tokens=partial(square_tokens, input_format=input_format),
    )


# lc0 input format number -> its encoding; the classical one is the shared encoding itself.
BY_INPUT_FORMAT: dict[int, Encoding] = {f: LC0_PLANES if f == CLASSICAL else _encoding(f) for f in INPUT_FORMATS}
