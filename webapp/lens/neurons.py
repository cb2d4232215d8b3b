"""Neurons on a job's position (issue 28, item 7): which neuron request is asked, checked before
anything is queued, and what a worker computes for it with ``analysis.lens.neurons``.

Four quantities, each cached like the rest of the lens (``LensResult``, per network, position
and request):

- ``neurons``: a layer's most active units on the position (peak over the squares, and where);
- ``neuron``: one unit's activation on every square (the map drawn on the board);
- ``carriers``: every unit's attribution to a move's logit (one backward pass), the strongest
  re-measured by exact ablation;
- ``where_else``: the unit's peak over a pool of positions (the head atlas's sample, this game's
  positions, or an uploaded FEN list), scanned in batches with stored progress. The pool's FENs are
  part of the request, so the same unit over the same positions is one cache entry.

Units with activations are found once per network by ``neuron_kinds`` (part of ``lens.describe``);
a network whose units have none is refused with the family's sentence, nothing queued.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

import chess

from analysis.lens import LensError, LensUnavailable
from webapp.lens.lens_params import whole

QUANTITIES = ("neurons", "neuron", "carriers", "where_else")
POOLS = ("atlas", "game", "fens")
MAX_TOP = 32
MAX_POOL = 512  # positions in an uploaded list (and the most of a game's a scan takes)
MAX_POOL_BYTES = 128 * 1024  # an uploaded list's body
SCAN_BATCH = 64  # positions per forward pass; the worker lets the network go between batches


def neuron_kinds(adapter) -> tuple[dict, str | None]:
    """{kind: {"squares": bool}} for each unit kind whose activations the adapter reads (tried on the
    start position), and the family's reason when there is none."""
    import torch

    kinds, why = {}, {}
    prepared = [adapter.prepare(chess.Board())]
    for name in adapter.units:
        try:
            with torch.no_grad():
                acts = adapter.activations(prepared, name, 0)
        except ValueError as exc:
            why[name] = str(exc)
            continue
        kinds[name] = {"squares": acts.shape[1] == 64}
    if kinds:
        return kinds, None
    fallback = f"a {adapter.family} network has no units with activations"
    return kinds, why.get("mlp") or next(iter(why.values()), fallback)


def _kind(described: dict, query) -> tuple[str, int, int]:
    neurons = described.get("neurons") or {}
    if not neurons:
        raise LensUnavailable(described["unavailable"].get("neurons") or "this network has no units with activations")
    kind = query.get("unit") or ("mlp" if "mlp" in neurons else next(iter(neurons)))
    if kind not in neurons:
        raise LensUnavailable(f"this network's {kind!r} units have no activations to read "
                              f"(units that have: {', '.join(neurons)})")
    units = described["units"][kind]
    return kind, units["layers"], units["per_layer"]


def _unit(described: dict, query, need_index: bool) -> dict:
    kind, layers, per_layer = _kind(described, query)
    layer = whole(query, "layer")
    if layer >= layers:
        raise LensError(f"layer {layer} is out of range: the network has {layers} layers (0 to {layers - 1})")
    out = {"unit": kind, "layer": layer}
    if need_index:
        index = whole(query, "index")
        if index >= per_layer:
            raise LensError(f"{kind} unit {index} is out of range: each layer has {per_layer} (0 to {per_layer - 1})")
        out["index"] = index
    return out


def check(quantity: str, query, board: chess.Board, described: dict, pool: list[str] | None = None) -> dict:
    """The canonical neuron request, or ``LensError`` (the API's 400). ``pool``: the FENs of a
    ``where_else`` scan over ``game`` or ``fens`` (checked by ``parse_fens``)."""
    from webapp.lens.lens import _move

    if quantity == "neurons":
        return {"quantity": "neurons", **_unit(described, query, False),
                "top": whole(query, "top", 10, 1, MAX_TOP)}
    if quantity == "neuron":
        request = {"quantity": "neuron", **_unit(described, query, True)}
        if not described["neurons"][request["unit"]]["squares"]:
            raise LensUnavailable(f"this network's {request['unit']} units have no squares: each has one "
                                  "activation per position, so there is no map to draw")
        return request
    if quantity == "carriers":
        if "policy" in described["unavailable"]:
            raise LensUnavailable(described["unavailable"]["policy"])
        kind, _, _ = _kind(described, query)
        return {"quantity": "carriers", "unit": kind, "move": _move(board, query.get("move") or ""),
                "top": whole(query, "top", 8, 1, MAX_TOP)}
    if quantity == "where_else":
        request = {"quantity": "where_else", **_unit(described, query, True),
                   "top": whole(query, "top", 8, 1, MAX_TOP)}
        name = query.get("pool") or "atlas"
        if name not in POOLS:
            raise LensError(f"pool must be one of {', '.join(POOLS)}, not {name!r}")
        request["pool"] = name
        if name != "atlas":
            request["fens"] = pool or []
        return request
    raise LensError(f"unknown neuron quantity {quantity!r}; one of {', '.join(QUANTITIES)}")


def parse_fens(value) -> list[str]:
    """An uploaded pool: a JSON list of FENs or one text with a FEN a line (blank lines and lines
    starting with # are skipped), at most ``MAX_POOL``, each a valid position; normalised FENs."""
    if isinstance(value, str):
        lines = [line.strip() for line in value.splitlines()]
        fens = [line for line in lines if line and not line.startswith("#")]
    elif isinstance(value, list) and all(isinstance(x, str) for x in value):
        fens = [x.strip() for x in value if x.strip()]
    else:
        raise LensError("fens must be a list of FEN strings or one text with a FEN a line")
    if not fens:
        raise LensError("the FEN list is empty")
    if len(fens) > MAX_POOL:
        raise LensError(f"the FEN list has {len(fens)} positions; at most {MAX_POOL} are scanned")
    out, playable = [], False
    for number, fen in enumerate(fens, start=1):
        try:
            board = chess.Board(fen)
        except ValueError as exc:
            raise LensError(f"FEN {number} ({fen[:60]!r}) is not a FEN: {exc}") from None
        if not board.is_valid():
            raise LensError(f"FEN {number} ({fen[:60]!r}) is not a legal position ({board.status().name})")
        out.append(board.fen())
        playable = playable or any(board.legal_moves)
    if not playable:
        raise LensError("no position of the list has a legal move, so there is nothing to scan")
    return out


def game_fens(nodes: list[dict]) -> list[str]:
    """This job's positions, each once, in node order (at most ``MAX_POOL``)."""
    seen: dict[str, None] = {}
    for node in nodes:
        seen.setdefault(chess.Board(node["fen"]).fen(), None)
    return list(seen)[:MAX_POOL]


# -- in the worker -------------------------------------------------------------------------
def compute(adapter, board: chess.Board, request: dict) -> dict:
    """The answer to a checked ``neurons``, ``neuron`` or ``carriers`` request (JSON-ready)."""
    from analysis.lens import neurons

    kind = request["unit"]
    if request["quantity"] == "neurons":
        found = neurons.most_active(adapter, board, request["layer"], kind, top=request["top"])
        return {"units": [{"index": a.unit, "peak": a.peak, "square": a.square, "mean": a.mean} for a in found]}
    if request["quantity"] == "neuron":
        values = neurons.unit_map(adapter, board, request["layer"], request["index"], kind)
        return {"map": [float(v) for v in values], "peak": float(values.max()),
                "square": chess.SQUARE_NAMES[int(values.argmax())]}
    found = neurons.carriers(adapter, board, request["move"], kind, top=request["top"])
    units = adapter.units[kind]
    return {"move": request["move"], "units": units.layers * units.per_layer,
            "carriers": [{"layer": c.layer, "index": c.unit, "attribution": c.attribution, "exact": c.exact}
                         for c in found]}


def pool_boards(request: dict) -> tuple[list[chess.Board], list[int], int]:
    """The request's pool: the boards with a legal move to scan, their places in the pool, its size."""
    if request["pool"] == "atlas":
        from analysis.heads.sample import load_sample

        boards = load_sample()
    else:
        boards = [chess.Board(fen) for fen in request["fens"]]
    places = [i for i, b in enumerate(boards) if any(b.legal_moves)]
    return [boards[i] for i in places], places, len(boards)


def scan(hold: Callable, request: dict, progress: Callable[[int, int], None]) -> dict:
    """Where the unit fires over the request's pool, ``SCAN_BATCH`` positions at a time. ``hold()``:
    a context giving the network's lens adapter to this scan alone, taken per batch so the worker's
    other work on the network runs between batches; ``progress(done, total)`` after each."""
    from analysis.lens.neurons import where_else

    boards, places, size = pool_boards(request)
    if not boards:
        raise LensError("no position of the pool has a legal move")
    found, total = [], None
    for start in range(0, len(boards), SCAN_BATCH):
        chunk = boards[start:start + SCAN_BATCH]
        with hold() as adapter:
            part = where_else(adapter, chunk, request["layer"], request["index"], request["unit"],
                              top=request["top"], batch=SCAN_BATCH)
        found += [replace(f, index=places[start + f.index]) for f in part.top]
        total = part.mean * len(chunk) + (0 if total is None else total)
        progress(start + len(chunk), len(boards))
    found.sort(key=lambda f: (-f.peak, f.index))
    mean = total / len(boards)
    return {"pool": request["pool"], "size": size, "scanned": len(boards), "skipped": size - len(boards),
            "squares": len(mean) == 64, "mean": [float(v) for v in mean],
            "top": [{"index": f.index, "fen": f.fen, "peak": f.peak, "square": f.square}
                    for f in found[:request["top"]]]}
