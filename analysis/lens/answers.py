"""The answer to each lens request (``analysis.lens.requests``): one JSON-ready dict, for the side to
move, the same for the command line and the site (which stores it and turns it to White's view).

``answer(adapter, board, request)`` computes any quantity; a where-else scan, which may be long,
also runs through ``scan(hold, request, progress)``, which takes the network a batch at a time.
"""

from __future__ import annotations

import base64
import math
from contextlib import nullcontext
from dataclasses import replace
from functools import singledispatch
from typing import Callable

import chess

from analysis.lens import LensError
from analysis.lens.requests import (MAX_MOVES, Ablate, Carriers, Grid, LensRequest, LogitLens, Neuron, Neurons,
                                    Split, WhereElse)

SPLIT_PARTS = ("content", "position", "final")
SCAN_BATCH = 64  # positions per forward pass; a worker lets the network go between batches


def answer(adapter, board: chess.Board, request: LensRequest) -> dict:
    """The answer to a checked request on ``board`` (``adapter``: the network's ``LensAdapter``)."""
    return _answer(request, adapter, board)


@singledispatch
def _answer(request: LensRequest, adapter, board: chess.Board) -> dict:
    raise LensError(f"no answer for {type(request).__name__}")


def _finite(array) -> list:
    return [[None if not math.isfinite(x) else float(x) for x in row] for row in array.tolist()]


@_answer.register
def _logit_lens(request: LogitLens, adapter, board: chess.Board) -> dict:
    from analysis.lens import core

    patch = request.patch
    if patch is None:
        view = core.logit_lens(adapter, board)
    else:
        view = core.logit_lens(adapter, board, chess.Board(patch.source), patch.point, patch.squares)
    out: dict = {"readouts": view.readouts, "score": None if view.score is None else view.score.tolist(),
                 "wdl": None if view.wdl is None else view.wdl.tolist(), "top": view.top(), "curves": {}}
    if view.logits is None:
        return out
    if request.every_move:
        out["logits"] = {uci: [float(x) for x in view.logits[:, m]] for m, uci in enumerate(view.moves)}
    last = view.logits[-1].argsort()[::-1]
    moves = list(request.moves) or [view.moves[i] for i in last[:MAX_MOVES]]
    for uci in moves:
        m = view.moves.index(uci)
        out["curves"][uci] = [{"logit": float(view.logits[r, m]), "prob": float(view.probs[r, m]),
                               "rank": int(view.ranks[r, m])} for r in range(len(view.readouts))]
    top_index = view.logits.argmax(1)
    out["top_prob"] = [float(view.probs[r, i]) for r, i in enumerate(top_index)]
    out["settles"] = {uci: view.settles(uci) for uci in moves}
    if request.readout is not None:
        r = view.readouts.index(request.readout)
        order = view.logits[r].argsort()[::-1][:5]
        out["readout"] = {"name": request.readout, "top": [[view.moves[i], float(view.probs[r, i])] for i in order]}
    return out


@_answer.register
def _ablate(request: Ablate, adapter, board: chess.Board) -> dict:
    from analysis.lens import core

    a = core.ablate(adapter, board, request.unit, request.layer, request.index, request.scale)
    return {"policy": [{"uci": u, "clean": c, "scaled": s} for u, c, s in a.policy_change()],
            "clean_score": a.clean_score, "scaled_score": a.scaled_score}


@_answer.register
def _grid(request: Grid, adapter, board: chess.Board) -> dict:
    from analysis.lens import core

    top = None if request.exact else request.top if request.top is not None else core.default_top(adapter, request.unit)
    g = core.grid(adapter, board, request.move, request.unit, top=top)
    return {"move": g.move, "unit": g.kind, "logit": _finite(g.logit), "exact": g.exact.tolist(),
            "score": None if g.score is None else _finite(g.score), "clean_logit": g.clean_logit,
            "clean_score": g.clean_score}


@_answer.register
def _split(request: Split, adapter, board: chess.Board) -> dict:
    """One layer's attention apart: each part (heads, 64, 64) by real squares as base64 of
    little-endian float16 (the position part is logits, not probabilities, so the attention
    endpoint's per-row uint8 scaling does not fit it; float16 halves float32's size)."""
    from analysis.lens import core

    core.require(adapter, "split")
    maps = adapter.attention_split(core.prepare(adapter, board), request.layer)
    parts = {name: maps[name].detach().float().cpu().numpy() for name in SPLIT_PARTS}
    encoded = {name: base64.b64encode(part.astype("<f2").tobytes()).decode("ascii") for name, part in parts.items()}
    return {"layer": request.layer, "heads": int(parts["final"].shape[0]), "encoding": "f16", **encoded}


@_answer.register
def _neurons(request: Neurons, adapter, board: chess.Board) -> dict:
    from analysis.lens import neurons

    found = neurons.most_active(adapter, board, request.layer, request.unit, top=request.top)
    return {"units": [{"index": a.unit, "peak": a.peak, "square": a.square, "mean": a.mean} for a in found]}


@_answer.register
def _neuron(request: Neuron, adapter, board: chess.Board) -> dict:
    from analysis.lens import neurons

    values = neurons.unit_map(adapter, board, request.layer, request.index, request.unit)
    return {"map": [float(v) for v in values], "peak": float(values.max()),
            "square": chess.SQUARE_NAMES[int(values.argmax())]}


@_answer.register
def _carriers(request: Carriers, adapter, board: chess.Board) -> dict:
    from analysis.lens import neurons

    found = neurons.carriers(adapter, board, request.move, request.unit, top=request.top)
    units = adapter.units[request.unit]
    return {"move": request.move, "units": units.layers * units.per_layer,
            "carriers": [{"layer": c.layer, "index": c.unit, "attribution": c.attribution, "exact": c.exact}
                         for c in found]}


@_answer.register
def _where_else(request: WhereElse, adapter, board: chess.Board) -> dict:
    return scan(lambda: nullcontext(adapter), request, lambda done, total: None)


def pool_boards(request: WhereElse) -> tuple[list[chess.Board], list[int], int]:
    """The request's pool: the boards with a legal move to scan, their places in the pool, its size."""
    if request.pool == "atlas":
        from analysis.heads.sample import load_sample

        boards = load_sample()
    else:
        boards = [chess.Board(fen) for fen in request.fens]
    places = [i for i, b in enumerate(boards) if any(b.legal_moves)]
    return [boards[i] for i in places], places, len(boards)


def scan(hold: Callable, request: WhereElse, progress: Callable[[int, int], None]) -> dict:
    """Where the unit fires over the request's pool, ``SCAN_BATCH`` positions at a time. ``hold()``:
    a context giving the network's lens adapter to this scan alone, taken per batch so a worker's
    other work on the network runs between batches; ``progress(done, total)`` after each."""
    from analysis.lens.neurons import where_else

    boards, places, size = pool_boards(request)
    if not boards:
        raise LensError("no position of the pool has a legal move")
    found, total = [], None
    for start in range(0, len(boards), SCAN_BATCH):
        chunk = boards[start:start + SCAN_BATCH]
        with hold() as adapter:
            part = where_else(adapter, chunk, request.layer, request.index, request.unit,
                              top=request.top, batch=SCAN_BATCH)
        found += [replace(f, index=places[start + f.index]) for f in part.top]
        total = part.mean * len(chunk) + (0 if total is None else total)
        progress(start + len(chunk), len(boards))
    found.sort(key=lambda f: (-f.peak, f.index))
    mean = total / len(boards)
    return {"pool": request.pool, "size": size, "scanned": len(boards), "skipped": size - len(boards),
            "squares": len(mean) == 64, "mean": [float(v) for v in mean],
            "top": [{"index": f.index, "fen": f.fen, "peak": f.peak, "square": f.square}
                    for f in found[:request.top]]}
