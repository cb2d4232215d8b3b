"""The concept library: what a probe asks a network to know, computed with python-chess.

Every concept is read in the **mover's frame** (``own`` = the side to move) and labelled on
**real squares** (a1 = 0, python-chess numbering, never mirrored for Black). A concept is one
function and one ``register`` line; its kind says how it is probed and scored:

- ``binary``: one 0/1 label per position (logistic probe, AUROC on a balanced test set);
- ``regression``: one number per position (ridge probe, R^2);
- ``square``: a (64,) label per position, NaN where the square is no candidate (a per-square
  logistic probe shared by all squares, AUROC per square, averaged over squares).

A label of NaN (a binary or regression concept) means "not defined here": the position is left
out of that concept's set (``mate_threat`` in check, where no null move can be made).

Engine concepts (``sf_score``, ``best_move_*``) read one Stockfish search per position at a small
node budget (``EngineFacts``); they exist only where Stockfish is installed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import chess
import chess.engine
import numpy as np

KINDS = ("binary", "regression", "square")
VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 100}
ENGINE_NODES = 2000  # the engine lane's budget per position: tactics-level, not a deep evaluation


@dataclass(frozen=True)
class EngineFacts:
    """What one Stockfish search says of a position, for the engine concepts."""

    score: float  # expected score for the side to move, in [0, 1]
    best: chess.Move


@dataclass(frozen=True)
class Concept:
    """``fn(board)`` (or ``fn(board, facts)`` for an engine concept) gives the label; ``about`` is
    the function's docstring, shown by the CLI and the docs."""

    name: str
    kind: str
    fn: Callable
    engine: bool = False

    @property
    def about(self) -> str:
        return " ".join((self.fn.__doc__ or "").split())

    def label(self, board: chess.Board, facts: EngineFacts | None = None):
        """The label: a float (NaN when undefined) or, for a square concept, a (64,) float array."""
        if self.engine:
            return float(self.fn(board, facts))
        value = self.fn(board)
        return np.asarray(value, dtype=np.float32) if self.kind == "square" else float(value)


CONCEPTS: dict[str, Concept] = {}


def register(name: str, kind: str, engine: bool = False):
    """Decorator: add ``fn`` to the library under ``name``."""
    if kind not in KINDS:
        raise ValueError(f"unknown concept kind {kind!r}")

    def add(fn):
        CONCEPTS[name] = Concept(name, kind, fn, engine)
        return fn
    return add


# Other names for a concept (the research note's pass criteria spell them so).
ALIASES = {"check": "in_check", "mate1": "mate_in_one"}


def get_concept(name: str) -> Concept:
    """The registered concept, by name or alias (ValueError naming the known ones otherwise)."""
    name = ALIASES.get(name, name)
    if name not in CONCEPTS:
        raise ValueError(f"unknown concept {name!r}: known are {', '.join(CONCEPTS)}")
    return CONCEPTS[name]


# --- helpers ---------------------------------------------------------------------------------

def en_prise(board: chess.Board, square: int) -> bool:
    """The piece on ``square`` (not a king) is attacked by more pieces than defend it, or by a
    lower-valued piece (pins and x-rays ignored: python-chess's attackers)."""
    piece = board.piece_at(square)
    if piece is None or piece.piece_type == chess.KING:
        return False
    attackers = board.attackers(not piece.color, square)
    if not attackers:
        return False
    defenders = board.attackers(piece.color, square)
    cheapest = min(VALUES[board.piece_type_at(s)] for s in attackers)
    return len(attackers) > len(defenders) or cheapest < VALUES[piece.piece_type]


def en_prise_map(board: chess.Board, color: chess.Color) -> np.ndarray:
    """(64,) per real square: 1 en prise, 0 a non-king piece of ``color`` that is not, NaN elsewhere."""
    out = np.full(64, np.nan, dtype=np.float32)
    for square, piece in board.piece_map().items():
        if piece.color == color and piece.piece_type != chess.KING:
            out[square] = float(en_prise(board, square))
    return out


def mate_in_one_move(board: chess.Board) -> chess.Move | None:
    """A legal move that mates at once, or None (checking moves only, so it is quick)."""
    for move in board.legal_moves:
        if board.gives_check(move):
            board.push(move)
            mate = board.is_checkmate()
            board.pop()
            if mate:
                return move
    return None


def _bits(mask: int) -> np.ndarray:
    """A python-chess square set as a (64,) 0/1 label per real square."""
    return np.array([(mask >> s) & 1 for s in range(64)], dtype=np.float32)


def _material(board: chess.Board, color: chess.Color) -> int:
    return sum(VALUES[p.piece_type] for p in board.piece_map().values() if p.color == color and p.piece_type != chess.KING)


def _passed(board: chess.Board, color: chess.Color) -> int:
    """Pawns of ``color`` with no enemy pawn ahead on their own or a neighbouring file."""
    enemy = board.pieces(chess.PAWN, not color)
    count = 0
    for square in board.pieces(chess.PAWN, color):
        file, rank = chess.square_file(square), chess.square_rank(square)
        ahead = (lambda r: r > rank) if color == chess.WHITE else (lambda r: r < rank)
        if not any(abs(chess.square_file(e) - file) <= 1 and ahead(chess.square_rank(e)) for e in enemy):
            count += 1
    return count


# --- the library -------------------------------------------------------------------------------

@register("material", "regression")
def material(board):
    """The mover's material minus the opponent's, in pawns (1, 3, 3, 5, 9)."""
    return _material(board, board.turn) - _material(board, not board.turn)


@register("in_check", "binary")
def in_check(board):
    """The side to move is in check."""
    return board.is_check()


@register("own_en_prise", "square")
def own_en_prise(board):
    """Per square holding one of the mover's pieces (not the king): that piece is en prise
    (more attackers than defenders, or attacked by a lower-valued piece)."""
    return en_prise_map(board, board.turn)


@register("opp_en_prise", "square")
def opp_en_prise(board):
    """Per square holding one of the opponent's pieces (not the king): that piece is en prise."""
    return en_prise_map(board, not board.turn)


@register("any_own_en_prise", "binary")
def any_own_en_prise(board):
    """Some piece of the mover is en prise (the any-square version of ``own_en_prise``)."""
    return bool(np.nansum(en_prise_map(board, board.turn)) > 0)


@register("any_opp_en_prise", "binary")
def any_opp_en_prise(board):
    """Some piece of the opponent is en prise (the any-square version of ``opp_en_prise``)."""
    return bool(np.nansum(en_prise_map(board, not board.turn)) > 0)


@register("mobility", "regression")
def mobility(board):
    """The number of legal moves of the side to move."""
    return board.legal_moves.count()


@register("mate_in_one", "binary")
def mate_in_one(board):
    """The side to move has a mate in one."""
    return mate_in_one_move(board) is not None


@register("mate_threat", "binary")
def mate_threat(board):
    """The opponent would mate in one if the mover passed (a null move). Undefined (NaN, the
    position is left out) when the mover is in check: a null move cannot be made there."""
    if board.is_check():
        return float("nan")
    board.push(chess.Move.null())
    try:
        return mate_in_one_move(board) is not None
    finally:
        board.pop()


@register("passed_pawns", "regression")
def passed_pawns(board):
    """The mover's passed pawns (no enemy pawn ahead on the same or a neighbouring file)."""
    return _passed(board, board.turn)


@register("opp_passed_pawns", "regression")
def opp_passed_pawns(board):
    """The opponent's passed pawns."""
    return _passed(board, not board.turn)


@register("pin", "binary")
def pin(board):
    """Some piece of either side is pinned to its own king (an absolute pin)."""
    return any(board.is_pinned(p.color, s) for s, p in board.piece_map().items() if p.piece_type != chess.KING)


@register("piece_on_square", "square")
def piece_on_square(board):
    """The sanity concept: per real square, some piece (of either colour) stands there; every
    square is a candidate. Colour-blind on purpose: whose piece it is is the mover's frame in lc0's
    planes but an absolute letter in ChessBench's FEN tokens, so only a colour-blind occupancy is
    in every family's input at the square itself. The first readout point must read it near
    perfectly, trained or not, Black to move included (a mirrored view reads the wrong rank)."""
    return _bits(board.occupied)


def _type_on_square(piece_type: chess.PieceType) -> Callable:
    """The sanity concept for one piece type (a label function with its own docstring)."""
    name = chess.piece_name(piece_type)

    def fn(board):
        return _bits(board.pieces_mask(piece_type, chess.WHITE) | board.pieces_mask(piece_type, chess.BLACK))
    fn.__name__ = f"{name}_on_square"
    fn.__doc__ = (f"The sanity concept by piece type: per real square, a {name} (of either colour) stands "
                  "there; every square a candidate. Colour-blind for piece_on_square's reason; stronger than "
                  "occupancy, since a probe must tell the types apart.")
    return fn


# One square concept per type (pawn_on_square ... king_on_square): a square concept's label is one
# 0/1 per square, so the six types are six concepts, each scored on the squares where it occurs.
for _type in chess.PIECE_TYPES:
    register(f"{chess.piece_name(_type)}_on_square", "square")(_type_on_square(_type))


# --- the engine lane (Stockfish at ENGINE_NODES nodes) -------------------------------------------

@register("sf_score", "regression", engine=True)
def sf_score(board, facts):
    """Stockfish's expected score for the side to move (0 to 1) at the engine lane's node budget."""
    return facts.score


@register("best_move_capture", "binary", engine=True)
def best_move_capture(board, facts):
    """Stockfish's best move captures."""
    return board.is_capture(facts.best)


@register("best_move_check", "binary", engine=True)
def best_move_check(board, facts):
    """Stockfish's best move gives check."""
    return board.gives_check(facts.best)


@register("best_move_quiet", "binary", engine=True)
def best_move_quiet(board, facts):
    """Stockfish's best move neither captures nor checks."""
    return not board.is_capture(facts.best) and not board.gives_check(facts.best)


def engine_facts(engine, board: chess.Board, nodes: int = ENGINE_NODES) -> EngineFacts:
    """One Stockfish search of ``board`` (a ``chess.engine.SimpleEngine``) at ``nodes`` nodes."""
    info = engine.analyse(board, chess.engine.Limit(nodes=nodes))
    score = info["score"].pov(board.turn).wdl(model="sf").expectation()
    return EngineFacts(score=float(score), best=info["pv"][0])
