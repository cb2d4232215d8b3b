"""The lens on a job's position (issue 28): which quantity is asked, checked before anything is
queued, and what a worker computes for it with ``analysis.lens``.

A request is one of ``lens`` (the logit lens: up to 4 chosen moves' curves and the top move per
readout point), ``ablate`` (one unit scaled: the policy clean vs scaled, the score), ``grid``
(each head or unit removed in turn: a move's logit change), ``split`` (one layer's attention
as content, position term and final map) and the neuron quantities of
``webapp.lens.neurons``. ``check_request`` turns the query into
its canonical form (the cache key's input) or raises ``LensError`` with the sentence the API
answers with 400; the network's shape comes from ``describe``, so a refused request queues nothing.
Answers are for the side to move; ``messages.lens_for_white`` turns them to White's view.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import threading

import chess

from analysis.lens import MAX_SCALE, LensError, LensUnavailable
from webapp.lens.lens_params import number
from webapp.lens import neurons
from webapp.lens.neurons import neuron_kinds

QUANTITIES = ("lens", "ablate", "grid", "split")
SPLIT_PARTS = ("content", "position", "final")
MAX_MOVES = 4
_descriptions: dict[str, dict] = {}
_lock = threading.Lock()


def describe(network) -> dict:
    """What the lens can do on ``network``: readout points, unit kinds (layers, per layer) and each
    capability it lacks with the family's reason. Read once per network (by checksum) from its
    adapter, loaded here on the CPU, and kept in Django's cache for the other web processes; a
    network without a lens gives ``{"unavailable": {"lens": why}}``."""
    from django.core.cache import cache

    with _lock:
        if network.checksum not in _descriptions:
            key = f"sightline.lens-about.v3.{network.checksum}"  # v3: ChessBench has neurons
            described = cache.get(key) or _describe(network)
            if described.pop("transient", False):
                return described  # asked again next time: the file may be back
            _descriptions[network.checksum] = described
            cache.set(key, described, None)
        return _descriptions[network.checksum]


def _describe(network) -> dict:
    from analysis.lens import lens_for
    from analysis.models.lens import CAPABILITIES

    if network.kind != network.Kind.CHECKPOINT:
        return {"unavailable": {"lens": f"{network.name} is a hand-written evaluation, not a network: "
                                         "it has no layers or heads to take apart"}}
    from analysis.checkpoint import load_evaluator

    try:
        evaluator = load_evaluator(network.path, "cpu", name=network.name)
        adapter = lens_for(evaluator.model, evaluator.encoding)
    except LensUnavailable as exc:
        return {"unavailable": {"lens": str(exc)}}
    except Exception as exc:  # a file that cannot be read here: refused, not a 500
        return {"unavailable": {"lens": f"{network.name} could not be loaded to take apart ({type(exc).__name__})"},
                "transient": True}
    kinds = {name: {"layers": u.layers, "per_layer": u.per_layer, "what": u.what} for name, u in adapter.units.items()}
    lacks = {cap: adapter.why_not(cap) for cap in CAPABILITIES if adapter.why_not(cap)}
    active, why = neuron_kinds(adapter)
    if why:
        lacks["neurons"] = why
    return {"family": adapter.family, "readouts": list(adapter.readouts), "units": kinds, "neurons": active,
            "unavailable": lacks, "norms": adapter.norm_note}


def _move(board: chess.Board, uci: str) -> str:
    try:
        move = chess.Move.from_uci(uci)
    except ValueError:
        raise LensError(f"{uci!r} is not a UCI move (such as e2e4)") from None
    if move not in board.legal_moves:
        raise LensError(f"{uci} is not a legal move in this position")
    return move.uci()


def _unit(described: dict, query, capability_needed: str | None) -> tuple[str, int, int | None]:
    kind = query.get("unit") or "head"
    units = described.get("units", {})
    if capability_needed and capability_needed in described["unavailable"]:
        raise LensUnavailable(described["unavailable"][capability_needed])
    if kind not in units:
        why = described["unavailable"].get(kind) or f"this network has no {kind!r} units"
        raise LensUnavailable(f"{why} (it has: {', '.join(units) or 'none'})")
    return kind, units[kind]["layers"], units[kind]["per_layer"]


def check_request(quantity: str, query, board: chess.Board, described: dict, pool: list[str] | None = None) -> dict:
    """The canonical request, or ``LensError`` (the API's 400) saying what is wrong (``pool``: a
    neuron scan's FENs, ``neurons.check``)."""
    if "lens" in described["unavailable"]:
        raise LensUnavailable(described["unavailable"]["lens"])
    if not any(board.legal_moves):
        raise LensError("the position has no legal moves (the game is over), so there is nothing to take apart")
    if quantity in neurons.QUANTITIES:
        return neurons.check(quantity, query, board, described, pool)
    if quantity == "lens":
        moves = [m for m in (query.get("moves") or "").split(",") if m]
        if len(moves) > MAX_MOVES:
            raise LensError(f"moves takes at most {MAX_MOVES} moves")
        return {"quantity": "lens", "moves": [_move(board, m) for m in moves]}
    if quantity == "ablate":
        kind, layers, per_layer = _unit(described, query, None)
        layer, index = number(query, "layer", int), number(query, "index", int)
        scale = number(query, "scale", float, 0.0)
        _check_range(kind, layer, index, layers, per_layer)
        if not -MAX_SCALE <= scale <= MAX_SCALE:
            raise LensError(f"scale {scale:g} is outside [{-MAX_SCALE:g}, {MAX_SCALE:g}]")
        return {"quantity": "ablate", "unit": kind, "layer": layer, "index": index, "scale": scale}
    if quantity == "grid":
        kind, _, _ = _unit(described, query, "policy")
        return {"quantity": "grid", "unit": kind, "move": _move(board, query.get("move") or "")}
    if quantity == "split":
        _, layers, _ = _unit(described, {"unit": "head"}, "split")
        layer = number(query, "layer", int, 0)
        if not 0 <= layer < layers:
            raise LensError(f"layer {layer} is out of range: the network has {layers} layers (0 to {layers - 1})")
        return {"quantity": "split", "layer": layer}
    raise LensError(f"unknown lens quantity {quantity!r}; one of {', '.join(QUANTITIES + neurons.QUANTITIES)}")


def _check_range(kind: str, layer: int, index: int, layers: int, per_layer: int) -> None:
    if not 0 <= layer < layers:
        raise LensError(f"layer {layer} is out of range: the network has {layers} layers (0 to {layers - 1})")
    if not 0 <= index < per_layer:
        raise LensError(f"{kind} {index} is out of range: each layer has {per_layer} (0 to {per_layer - 1})")


def request_key(request: dict) -> str:
    return hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()


# -- in the worker -------------------------------------------------------------------------
def compute(adapter, board: chess.Board, request: dict) -> dict:
    """The answer to a checked request, for the side to move (JSON-ready)."""
    from analysis.lens import core

    if request["quantity"] in neurons.QUANTITIES:
        return neurons.compute(adapter, board, request)
    if request["quantity"] == "lens":
        return _lens(core.logit_lens(adapter, board), request["moves"])
    if request["quantity"] == "split":
        return _split(adapter, board, request["layer"])
    if request["quantity"] == "ablate":
        a = core.ablate(adapter, board, request["unit"], request["layer"], request["index"], request["scale"])
        rows = a.policy_change()
        return {"policy": [{"uci": u, "clean": c, "scaled": s} for u, c, s in rows],
                "clean_score": a.clean_score, "scaled_score": a.scaled_score}
    g = core.grid(adapter, board, request["move"], request["unit"], top=core.default_top(adapter, request["unit"]))
    return {"move": g.move, "unit": g.kind, "logit": _finite(g.logit), "exact": g.exact.tolist(),
            "score": None if g.score is None else _finite(g.score), "clean_logit": g.clean_logit,
            "clean_score": g.clean_score}


def _split(adapter, board: chess.Board, layer: int) -> dict:
    """One layer's attention apart: each part (heads, 64, 64) by real squares as base64 of
    little-endian float16 (the position part is logits, not probabilities, so the attention
    endpoint's per-row uint8 scaling does not fit it; float16 halves float32's size)."""
    from analysis.lens import core

    core.require(adapter, "split")
    maps = adapter.attention_split(core.prepare(adapter, board), layer)
    parts = {name: maps[name].detach().float().cpu().numpy() for name in SPLIT_PARTS}
    encoded = {name: base64.b64encode(part.astype("<f2").tobytes()).decode("ascii") for name, part in parts.items()}
    return {"layer": layer, "heads": int(parts["final"].shape[0]), "encoding": "f16", **encoded}


def _finite(array) -> list:
    return [[None if not math.isfinite(x) else float(x) for x in row] for row in array.tolist()]


def _lens(view, chosen: list[str]) -> dict:
    out: dict = {"readouts": view.readouts, "score": None if view.score is None else view.score.tolist(),
                 "wdl": None if view.wdl is None else view.wdl.tolist(), "top": view.top(), "curves": {}}
    if view.logits is None:
        return out
    last = view.logits[-1].argsort()[::-1]
    moves = chosen or [view.moves[i] for i in last[:MAX_MOVES]]
    for uci in moves:
        m = view.moves.index(uci)
        out["curves"][uci] = [{"logit": float(view.logits[r, m]), "prob": float(view.probs[r, m]),
                               "rank": int(view.ranks[r, m])} for r in range(len(view.readouts))]
    top_index = view.logits.argmax(1)
    out["top_prob"] = [float(view.probs[r, i]) for r, i in enumerate(top_index)]
    out["settles"] = {uci: view.settles(uci) for uci in moves}
    return out
