""""Show me": a query square that makes a head's pattern visible in a position, and the
pattern's squares to overlay on its map (real squares, a1 = 0 ... h8 = 63)."""

from __future__ import annotations

from dataclasses import dataclass

import chess

from analysis.heads.patterns import MOVEMENT, PATTERNS, PIECE_NAMES, mover_frame, masks

_PIECE_OF = {f"{name}-moves": piece for piece, name in PIECE_NAMES.items()}
_CENTRE = (chess.D4, chess.E4, chess.D5, chess.E5)


@dataclass(frozen=True)
class ShowMe:
    label: str
    query: int | None  # None when this position cannot show the pattern
    squares: list[int]
    note: str


def show_me(board: chess.Board, label: str) -> ShowMe:
    """The query square and pattern squares for ``label`` (ValueError for a label outside the vocabulary)."""
    if label not in PATTERNS:
        raise ValueError(f"no pattern to show for {label!r}; patterns: {', '.join(PATTERNS)}")
    index = PATTERNS.index(label)
    table = masks(board)[index]  # (64 queries, 64 keys), mover's frame
    query = _pick(mover_frame(board), label, table)
    if query is None:
        return ShowMe(label, None, [], f"this position has no square where {label} shows: "
                                         f"try one {_missing(label)}")
    real = (lambda s: s) if board.turn == chess.WHITE else (lambda s: s ^ 56)
    squares = sorted(real(int(s)) for s in table[query].nonzero()[0])
    return ShowMe(label, real(query), squares, f"query {chess.square_name(real(query))}: "
                                               f"{len(squares)} squares of {label}")


def pattern_table(board: chess.Board, label: str) -> list[list[int]]:
    """For every query square (real squares), the squares of ``label``'s pattern: the explorer picks,
    from the head's own map, the query where the head puts most of its attention on them."""
    if label not in PATTERNS:
        raise ValueError(f"no pattern to show for {label!r}; patterns: {', '.join(PATTERNS)}")
    table = masks(board)[PATTERNS.index(label)]
    flip = 0 if board.turn == chess.WHITE else 56
    return [sorted(int(s) ^ flip for s in table[q ^ flip].nonzero()[0]) for q in range(64)]


def _pick(seen: chess.Board, label: str, table) -> int | None:
    sizes = table.sum(axis=1)
    if label in MOVEMENT:
        # Roomiest square, preferring one where such a piece stands, then the centre.
        piece = _PIECE_OF[label]
        return max(range(64), key=lambda q: (sizes[q], seen.piece_type_at(q) == piece, -_centre_distance(q)))
    if label == "self":
        return chess.D4
    if label == "reverse-movement":
        best = max(range(64), key=lambda q: (sizes[q], -_centre_distance(q)))
        return best if sizes[best] else None
    # Piece and colour patterns look the same from every square: the centre, off the pattern.
    return next((q for q in sorted(range(64), key=_centre_distance) if sizes[q] and not table[q, q]), None)


def _centre_distance(q: int) -> float:
    return min(abs(chess.square_file(q) - chess.square_file(c)) + abs(chess.square_rank(q) - chess.square_rank(c))
               for c in _CENTRE)


def _missing(label: str) -> str:
    if label == "reverse-movement":
        return "where pieces attack a square"
    side, _, piece = label.partition("-")
    return f"where the {'opponent' if side == 'opponent' else 'mover'} has a {piece}" \
        if piece not in ("pieces",) else f"with {side} pieces"
