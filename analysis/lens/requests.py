"""The lens's requests, one frozen dataclass per quantity: checked once, against the network's
``LensDescription`` and the position, before anything is computed.

``parse(quantity, query, description, board, pool)`` reads a query (an HTTP query's text or the
command line's values) into a request, or raises ``LensError`` with the sentence the API answers
with 400 and the command line prints. ``to_json()`` is the request's one JSON form: the site's
cache key and what its answers echo; ``stored(data)`` reads it back (already checked). The answers
are ``analysis.lens.answers``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from dataclasses import asdict, dataclass
from typing import ClassVar, Mapping

import chess

from analysis.lens import LensError, LensMismatch, LensUnavailable
from analysis.lens.checks import (has_moves, index_in_range, known_readout, layer_in_range, legal_move, number,
                                  scale_in_range, whole)
from analysis.lens.description import LensDescription
from analysis.positions import board_from_fen

MAX_MOVES = 4  # moves the logit lens follows
MAX_TOP = 32  # units or positions a neuron answer lists
POOLS = ("atlas", "game", "fens")


def _capability(description: LensDescription, name: str) -> None:
    if description.why_not(name):
        raise LensUnavailable(description.why_not(name))


def _unit_kind(description: LensDescription, query: Mapping) -> str:
    """The unit kind a head or unit quantity addresses (default head)."""
    kind = query.get("unit") or "head"
    if kind not in description.units:
        why = description.why_not(kind) or f"this network has no {kind!r} units"
        raise LensUnavailable(f"{why} (it has: {', '.join(description.units) or 'none'})")
    return kind


def _neuron_kind(description: LensDescription, query: Mapping) -> str:
    """The unit kind a neuron quantity reads (default mlp, else the first with activations)."""
    kinds = description.neurons
    if not kinds:
        raise LensUnavailable(description.why_not("neurons") or "this network has no units with activations")
    kind = query.get("unit") or ("mlp" if "mlp" in kinds else next(iter(kinds)))
    if kind not in kinds:
        raise LensUnavailable(f"this network's {kind!r} units have no activations to read "
                              f"(units that have: {', '.join(kinds)})")
    return kind


def _neuron(description: LensDescription, query: Mapping, need_index: bool) -> dict:
    """A neuron quantity's unit, layer and (when ``need_index``) index, checked."""
    kind = _neuron_kind(description, query)
    shape = description.units[kind]
    out = {"unit": kind, "layer": layer_in_range(whole(query, "layer"), shape.layers)}
    if need_index:
        out["index"] = index_in_range(kind, whole(query, "index"), shape.per_layer)
    return out


@dataclass(frozen=True)
class LensRequest(ABC):
    """One quantity asked of the lens on one position."""

    quantity: ClassVar[str]

    @classmethod
    @abstractmethod
    def from_json(cls, query: Mapping, description: LensDescription, board: chess.Board,
                  pool: list[str] | None = None) -> "LensRequest":
        """The request ``query`` asks for on ``board``, checked against ``description`` (``LensError`` if not)."""

    def to_json(self) -> dict:
        return {"quantity": self.quantity, **asdict(self)}


@dataclass(frozen=True)
class LogitLens(LensRequest):
    """Every readout point read through the heads: up to ``MAX_MOVES`` moves' curves (default the
    network's own top ones) and the top move per point; ``readout``: also that point's top moves."""

    quantity: ClassVar[str] = "lens"
    moves: tuple[str, ...] = ()
    readout: str | None = None
    patch: Patching | None = None
    every_move: bool = False  # the answer also lists every legal move's logit per readout (the CLI's)

    @classmethod
    def from_json(cls, query, description, board, pool=None) -> "LogitLens":
        moves = query.get("moves") or ()
        moves = [m for m in (moves.split(",") if isinstance(moves, str) else moves) if m]
        if len(moves) > MAX_MOVES:
            raise LensError(f"moves takes at most {MAX_MOVES} moves")
        readout = query.get("readout") or None
        if readout is not None:
            known_readout(readout, description.readouts)
        patch = Patching.from_json(query, description, board) if query.get("patch_from") else None
        return cls(tuple(legal_move(board, m) for m in moves), readout, patch)

    def to_json(self) -> dict:
        out = {"quantity": self.quantity, "moves": list(self.moves)}
        if self.readout is not None:
            out["readout"] = self.readout
        if self.patch is not None:
            out["patch"] = asdict(self.patch)
        return out


@dataclass(frozen=True)
class Patching:
    """The logit lens of a patched pass: readout ``point`` on ``squares`` (real squares, a1 = 0;
    all 64 = the whole point) taken from the pass of ``source`` (a FEN: the corrupted position)."""

    source: str
    point: str
    squares: tuple[int, ...]

    @classmethod
    def from_json(cls, query, description, board) -> "Patching":
        _capability(description, "patch")
        try:
            source = board_from_fen(query["patch_from"])
        except ValueError as exc:
            raise LensError(f"patch_from: {exc}") from None
        if source.turn != board.turn:
            raise LensMismatch("patch_from must have the same side to move as the position: the squares "
                               "sit on other rows of a mirrored frame")
        point = query.get("patch_point") or ""
        known_readout(point, description.readouts)
        return cls(source.fen(), point, parse_squares(query.get("patch_squares") or "all"))


def parse_squares(value) -> tuple[int, ...]:
    """"all" or square names (a list, or text split by commas) as sorted real squares."""
    names = value.split(",") if isinstance(value, str) else list(value)
    names = [n.strip().lower() for n in names if str(n).strip()]
    if names == ["all"]:
        return tuple(range(64))
    if not names:
        raise LensError("patch_squares wants 'all' or square names such as e4,d5")
    try:
        return tuple(sorted({chess.parse_square(n) for n in names}))
    except ValueError:
        bad = next(n for n in names if n not in chess.SQUARE_NAMES)
        raise LensError(f"patch_squares: {bad!r} is not a square (a1 to h8), nor 'all'") from None


@dataclass(frozen=True)
class Ablate(LensRequest):
    """One unit's write scaled (0 removes it, 1 is clean, -1 flips): the policy and score, clean and scaled."""

    quantity: ClassVar[str] = "ablate"
    unit: str
    layer: int
    index: int
    scale: float = 0.0

    @classmethod
    def from_json(cls, query, description, board, pool=None) -> "Ablate":
        kind = _unit_kind(description, query)
        layer, index = number(query, "layer", int), number(query, "index", int)
        scale = number(query, "scale", float, 0.0)
        shape = description.units[kind]
        layer_in_range(layer, shape.layers)
        index_in_range(kind, index, shape.per_layer)
        return cls(kind, layer, index, scale_in_range(scale))


@dataclass(frozen=True)
class Grid(LensRequest):
    """Each unit removed in turn: a move's logit change. ``top``: re-measure only the ``top``
    strongest by attribution (None: the automatic choice); ``exact``: every unit, however many.
    Neither is read from a query (the site always takes the automatic choice)."""

    quantity: ClassVar[str] = "grid"
    unit: str
    move: str
    top: int | None = None
    exact: bool = False

    def __post_init__(self):
        if self.top is not None and self.top < 0:
            raise LensError("top must be 0 or more")

    @classmethod
    def from_json(cls, query, description, board, pool=None) -> "Grid":
        _capability(description, "policy")
        return cls(_unit_kind(description, query), legal_move(board, query.get("move") or ""))

    def to_json(self) -> dict:
        out = {"quantity": self.quantity, "unit": self.unit, "move": self.move}
        return {**out, **({"top": self.top} if self.top is not None else {}), **({"exact": True} if self.exact else {})}


@dataclass(frozen=True)
class Split(LensRequest):
    """One layer's attention taken apart: content, position term and the final map."""

    quantity: ClassVar[str] = "split"
    layer: int = 0

    @classmethod
    def from_json(cls, query, description, board, pool=None) -> "Split":
        _capability(description, "split")
        kind = _unit_kind(description, {"unit": "head"})
        return cls(layer_in_range(number(query, "layer", int, 0), description.units[kind].layers))


@dataclass(frozen=True)
class Neurons(LensRequest):
    """A layer's most active units on the position (peak over the squares, and where)."""

    quantity: ClassVar[str] = "neurons"
    unit: str
    layer: int
    top: int = 10

    @classmethod
    def from_json(cls, query, description, board, pool=None) -> "Neurons":
        return cls(**_neuron(description, query, False), top=whole(query, "top", 10, 1, MAX_TOP))


@dataclass(frozen=True)
class Neuron(LensRequest):
    """One unit's activation on every square (the map drawn on the board)."""

    quantity: ClassVar[str] = "neuron"
    unit: str
    layer: int
    index: int

    @classmethod
    def from_json(cls, query, description, board, pool=None) -> "Neuron":
        request = cls(**_neuron(description, query, True))
        if not description.neurons[request.unit]:
            raise LensUnavailable(f"this network's {request.unit} units have no squares: each has one "
                                  "activation per position, so there is no map to draw")
        return request


@dataclass(frozen=True)
class Carriers(LensRequest):
    """Every unit's attribution to a move's logit, the strongest re-measured by exact removal."""

    quantity: ClassVar[str] = "carriers"
    unit: str
    move: str
    top: int = 8

    @classmethod
    def from_json(cls, query, description, board, pool=None) -> "Carriers":
        _capability(description, "policy")
        kind = _neuron_kind(description, query)
        return cls(kind, legal_move(board, query.get("move") or ""), whole(query, "top", 8, 1, MAX_TOP))


@dataclass(frozen=True)
class WhereElse(LensRequest):
    """Where else a unit fires over a pool of positions: the head atlas's sample (``atlas``) or
    the FENs of ``game`` or ``fens`` (part of the request, so one pool is one cache entry)."""

    quantity: ClassVar[str] = "where_else"
    unit: str
    layer: int
    index: int
    top: int = 8
    pool: str = "atlas"
    fens: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, query, description, board, pool=None) -> "WhereElse":
        unit = _neuron(description, query, True)
        top = whole(query, "top", 8, 1, MAX_TOP)
        name = query.get("pool") or "atlas"
        if name not in POOLS:
            raise LensError(f"pool must be one of {', '.join(POOLS)}, not {name!r}")
        return cls(**unit, top=top, pool=name, fens=() if name == "atlas" else tuple(pool or ()))

    def to_json(self) -> dict:
        out = {"quantity": self.quantity, "unit": self.unit, "layer": self.layer, "index": self.index,
               "top": self.top, "pool": self.pool}
        return out if self.pool == "atlas" else {**out, "fens": list(self.fens)}


REQUESTS: dict[str, type[LensRequest]] = {cls.quantity: cls for cls in (
    LogitLens, Ablate, Grid, Split, Neurons, Neuron, Carriers, WhereElse)}
QUANTITIES = tuple(REQUESTS)


def parse(quantity: str, query: Mapping, description: LensDescription, board: chess.Board,
          pool: list[str] | None = None) -> LensRequest:
    """The checked request, or ``LensError`` saying what is wrong (``pool``: a where-else scan's
    FENs for the ``game`` and ``fens`` pools, read with ``checks.parse_fens``)."""
    _capability(description, "lens")
    has_moves(board)
    if quantity not in REQUESTS:
        raise LensError(f"unknown lens quantity {quantity!r}; one of {', '.join(QUANTITIES)}")
    return REQUESTS[quantity].from_json(query, description, board, pool)


def stored(data: dict) -> LensRequest:
    """A request from its ``to_json()`` form (checked when it was made)."""
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k != "quantity"}
    if isinstance(fields.get("patch"), dict):
        fields["patch"] = Patching(**{**fields["patch"], "squares": tuple(fields["patch"]["squares"])})
    return REQUESTS[data["quantity"]](**fields)
