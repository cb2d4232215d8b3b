"""The lens's input checks, each refusal a ``LensError`` sentence written once: the command line,
the site's API (its 400) and the adapters' own guards all say the same thing the same way.

Query values may be text (an HTTP query) or numbers (the command line); both are read here.
"""

from __future__ import annotations

import math
import re

import chess

from analysis.lens import MAX_SCALE, LensError, LensMismatch
from analysis.positions import board_from_fen

# A move in UCI as the lens reads one (a schema's pattern too); "a1a1" has the shape but is no move.
UCI_MOVE = "[a-h][1-8][a-h][1-8][qrbn]?"
MAX_POOL = 512  # positions in an uploaded FEN list (and the most of a game's a scan takes)


def number(query, name: str, cast=int, default=None):
    """``query[name]`` as ``cast`` (int or float), ``default`` when absent (required when None)."""
    text = query.get(name)
    if text in (None, ""):
        if default is None:
            raise LensError(f"{name} is required")
        return default
    if cast is int and isinstance(text, float) and not text.is_integer():
        text = str(text)  # 1.5 is not a whole number (int() would round it down)
    try:
        value = cast(text)
    except (TypeError, ValueError, OverflowError):
        raise LensError(f"{name} must be a {'whole ' if cast is int else ''}number, not {text!r}") from None
    if cast is float and not math.isfinite(value):
        raise LensError(f"{name} must be a finite number")
    return value


def whole(query, name: str, default: int | None = None, low: int = 0, high: int | None = None) -> int:
    """A whole number of at least ``low`` (and at most ``high`` when given)."""
    value = number(query, name, int, default)
    if high is None and value < low:
        raise LensError(f"{name} must be {low} or more, not {value}")
    if high is not None and not low <= value <= high:
        raise LensError(f"{name} must be between {low} and {high}, not {value}")
    return value


def layer_in_range(layer: int, layers: int) -> int:
    """A negative layer is never one (LensError); one past the network's last does not fit it (LensMismatch)."""
    if layer < 0:
        raise LensError(f"layer must be 0 or more, not {layer}")
    if layer >= layers:
        raise LensMismatch(f"layer {layer} is out of range: the network has {layers} layers (0 to {layers - 1})")
    return layer


def index_in_range(kind: str, index: int, per_layer: int) -> int:
    if index < 0:
        raise LensError(f"{kind} {index} is out of range: a unit is counted from 0")
    if index >= per_layer:
        raise LensMismatch(f"{kind} {index} is out of range: each layer has {per_layer} (0 to {per_layer - 1})")
    return index


def scale_in_range(scale: float) -> float:
    if not math.isfinite(scale) or not -MAX_SCALE <= scale <= MAX_SCALE:
        raise LensError(f"scale {scale:g} is outside [{-MAX_SCALE:g}, {MAX_SCALE:g}]")
    return float(scale)


def known_readout(name: str, readouts) -> int:
    """Where readout point ``name`` sits among ``readouts`` (forward order)."""
    if name not in readouts:
        raise LensMismatch(f"unknown readout point {name!r}; this network has {', '.join(readouts)}")
    return list(readouts).index(name)


def parse_move(text: str) -> chess.Move:
    try:
        return chess.Move.from_uci(text)
    except (ValueError, TypeError):
        raise LensError(f"{text!r} is not a UCI move (such as e2e4)") from None


def legal_move(board: chess.Board, uci: str) -> str:
    """``uci`` as a legal move of ``board`` in canonical UCI (LensError when bad or illegal)."""
    if re.fullmatch(UCI_MOVE, uci or ""):
        try:
            move = chess.Move.from_uci(uci)
        except ValueError:
            move = None  # the shape of a move, but none (a piece that stays on its square)
    else:
        move = parse_move(uci)
    if move is None or move not in board.legal_moves:
        raise LensMismatch(f"{uci} is not a legal move in this position")
    return move.uci()


def has_moves(board: chess.Board) -> None:
    if not any(board.legal_moves):
        raise LensMismatch("the position has no legal moves (the game is over), so there is nothing to take apart")


def parse_fens(value) -> list[str]:
    """A list of positions: a JSON list of FENs or one text with a FEN a line (blank lines and lines
    starting with # are skipped), at most ``MAX_POOL``, each read as the site's form reads a FEN
    (``analysis.positions.board_from_fen``), at least one with a legal move; normalised FENs.
    A refused FEN is named by where it was: ``fens[i]`` in a list, ``line n`` in a text."""
    placed = _placed_fens(value)
    # A list's length is the schema's (maxItems); a text's lines and every FEN's content are not.
    refusal = LensError if isinstance(value, list) else LensMismatch
    if not placed:
        raise refusal("the FEN list is empty")
    if len(placed) > MAX_POOL:
        raise refusal(f"the FEN list has {len(placed)} positions; at most {MAX_POOL} are scanned")
    boards = []
    for place, fen in placed:
        try:
            boards.append(board_from_fen(fen))
        except ValueError as exc:
            raise LensMismatch(f"{place}: {exc}") from None
    if not any(any(board.legal_moves) for board in boards):
        raise LensMismatch("no position of the list has a legal move, so there is nothing to scan")
    return [board.fen() for board in boards]


def _placed_fens(value) -> list[tuple[str, str]]:
    """(where, FEN) for every FEN of a list or a text."""
    if isinstance(value, str):
        lines = enumerate((line.strip() for line in value.splitlines()), start=1)
        return [(f"line {n}", line) for n, line in lines if line and not line.startswith("#")]
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        return [(f"fens[{i}]", x.strip()) for i, x in enumerate(value) if x.strip()]
    raise LensError("fens must be a list of FEN strings or one text with a FEN a line")
