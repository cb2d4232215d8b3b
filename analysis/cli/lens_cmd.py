"""``lens``: take a network apart on one position (logit lens, ablation and steering, the causal head grid).

JSON contract (``--json``): ``readouts`` (forward order; the last is the network's own output),
``lens`` ({uci: [{"logit", "prob", "rank"} per readout]} for every legal move; the logit is the raw
policy output), ``top`` (the top move per readout), ``score`` (expected score for the side to
move per readout; absent without a value); ``--ablate L:I --scale S`` adds ``ablated``
{"policy": {uci: prob}, "score"} (and ``clean``); ``--grid UCI`` adds ``grid`` and ``exact``
(layers x heads). Neurons (``--unit`` defaults to mlp for them): ``--neurons L`` adds ``neurons``
(layer L's most active units), ``--unit-map L:I`` adds ``unit_map`` (64 activations, a1 first),
``--carriers UCI`` adds ``carriers`` (attribution to the move's logit, the top re-measured exactly),
``--where-else L:I [--pool FILE]`` adds ``where_else`` (the unit's strongest positions over the head
atlas's sample, or a file with a FEN a line). Layers and units count from 0.
"""

from __future__ import annotations

import argparse
import json
import math

from analysis.cli import CommandError


def register(subparsers) -> None:
    p = subparsers.add_parser("lens", help="logit lens, head ablation/steering and causal head grid on one position")
    p.add_argument("--model", required=True)
    p.add_argument("--fen", required=True)
    p.add_argument("--moves", nargs="+", default=[], metavar="UCI",
                   help="moves to follow (up to 4): where each settles as the top move")
    p.add_argument("--readout", default=None, help="also list the top moves at this readout point")
    p.add_argument("--ablate", default=None, metavar="L:I", help="scale unit I of layer L (from 0)")
    p.add_argument("--unit", default=None, help="what --ablate and --grid address (default head): head, mlp, or a "
                   "kind the family adds (block and channel for lc0 SE-ResNets, group for Giraffe); the neuron "
                   "options read mlp by default")
    p.add_argument("--scale", type=float, default=0.0,
                   help="0 removes the unit's write, 1 is clean, 2 doubles, -1 flips")
    p.add_argument("--grid", default=None, metavar="UCI", help="the causal grid of this move")
    p.add_argument("--top", type=int, default=None,
                   help="grid by attribution patching, re-measuring only the TOP strongest exactly (default: "
                        "every unit exactly when there are at most 256, else the top 16)")
    p.add_argument("--exact", action="store_true", help="grid: remove every unit exactly, however many")
    p.add_argument("--neurons", type=int, default=None, metavar="L", help="layer L's most active units here")
    p.add_argument("--unit-map", default=None, metavar="L:I", help="unit I of layer L: its activation per square")
    p.add_argument("--carriers", default=None, metavar="UCI",
                   help="every unit's attribution to this move's logit, the strongest re-measured exactly")
    p.add_argument("--where-else", default=None, metavar="L:I", help="where else unit I of layer L fires over --pool")
    p.add_argument("--pool", default="atlas", metavar="FILE",
                   help="--where-else's positions: atlas (the head atlas's 256) or a file with a FEN a line")
    p.add_argument("--neuron-top", type=int, default=8, metavar="N",
                   help="how many units or positions the neuron options list (default 8)")
    p.add_argument("--device", default=None, help="cpu or cuda (default: $SIGHTLINE_DEVICE, else auto)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=run_lens)


def _parse_unit(text: str, option: str = "--ablate") -> tuple[int, int]:
    try:
        layer, index = (int(part) for part in text.split(":"))
    except ValueError:
        raise CommandError(f"{option} wants LAYER:INDEX (two integers from 0), not {text!r}") from None
    return layer, index


def _finite(x):
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x


def run_lens(args: argparse.Namespace) -> int:
    import chess

    from analysis.checkpoint import CheckpointError, load_evaluator
    from analysis.lens import LensError, lens_for

    try:
        board = chess.Board(args.fen)
    except ValueError as exc:
        raise CommandError(f"bad FEN: {exc}") from None
    if len(args.moves) > 4:
        raise CommandError("--moves takes at most 4 moves")
    unit = _parse_unit(args.ablate) if args.ablate is not None else None
    args.neuron_kind, args.unit = args.unit or "mlp", args.unit or "head"
    args.unit_map = _parse_unit(args.unit_map, "--unit-map") if args.unit_map is not None else None
    args.where_else = _parse_unit(args.where_else, "--where-else") if args.where_else is not None else None
    pool = _pool(args.pool) if args.where_else is not None else None
    try:
        evaluator = load_evaluator(args.model, device=args.device)
        adapter = lens_for(evaluator.model, evaluator.encoding)
        _check(adapter, board, args, unit)
        result = _compute(adapter, board, args, unit)
        result.update(neuron_results(adapter, board, args, pool))
    except (CheckpointError, LensError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    print(json.dumps(result) if args.json else _text(result))
    return 0


def _check(adapter, board, args, unit) -> None:
    """Every input checked before anything is computed."""
    from analysis.lens import core

    prepared = core.prepare(adapter, board)
    for uci in args.moves + ([args.grid] if args.grid else []):
        core.move_index(prepared, uci)
    if args.readout is not None:
        core.check_readout(adapter, args.readout)
    if unit is not None:
        core.check_unit(adapter, args.unit, *unit)
        core.check_scale(args.scale)
    if args.grid is not None:
        core.require(adapter, "policy")
        core.require(adapter, args.unit)
        if args.top is not None and args.top < 0:
            raise CommandError("--top must be 0 or more")
    if args.neuron_top < 1:
        raise CommandError("--neuron-top must be 1 or more")
    for layer, index in filter(None, (args.unit_map, args.where_else)):
        core.check_unit(adapter, args.neuron_kind, layer, index)
    if args.neurons is not None:
        core.check_unit(adapter, args.neuron_kind, args.neurons, 0)
    if args.carriers is not None:
        core.move_index(prepared, args.carriers)
        core.require(adapter, "policy")
        core.require(adapter, args.neuron_kind)


def _compute(adapter, board, args, unit) -> dict:
    from analysis.lens import core

    view = core.logit_lens(adapter, board)
    result: dict = {"fen": board.fen(), "family": adapter.family, "readouts": view.readouts,
                    "norms": adapter.norm_note,
                    "unavailable": {k: v for k, v in adapter.unavailable.items()}}
    if view.logits is not None:
        result["lens"] = {uci: [{"logit": float(view.logits[r, m]), "prob": float(view.probs[r, m]),
                                 "rank": int(view.ranks[r, m])} for r in range(len(view.readouts))]
                          for m, uci in enumerate(view.moves)}
        result["top"] = view.top()
        result["moves"] = {uci: {"settles": view.settles(uci)} for uci in args.moves}
    if view.score is not None:
        result["score"] = view.score.tolist()
    if view.wdl is not None:
        result["wdl"] = view.wdl.tolist()
    if args.readout is not None and view.logits is not None:
        r = view.readouts.index(args.readout)
        order = view.logits[r].argsort()[::-1][:5]
        result["readout"] = {"name": args.readout, "top": [[view.moves[i], float(view.probs[r, i])] for i in order]}
    if unit is not None:
        a = core.ablate(adapter, board, args.unit, *unit, args.scale)
        result["ablated"] = {"unit": args.unit, "layer": unit[0], "index": unit[1], "scale": args.scale,
                             "policy": None if a.scaled is None else dict(zip(a.moves, a.scaled.tolist())),
                             "score": a.scaled_score}
        result["clean"] = {"policy": None if a.clean is None else dict(zip(a.moves, a.clean.tolist())),
                           "score": a.clean_score}
    if args.grid is not None:
        top = None if args.exact else args.top if args.top is not None else core.default_top(adapter, args.unit)
        g = core.grid(adapter, board, args.grid, args.unit, top=top)
        result["grid"] = g.logit.tolist()
        result["exact"] = g.exact.tolist()
        if g.score is not None:
            result["grid_score"] = [[_finite(float(x)) for x in row] for row in g.score]
        result["grid_move"] = {"uci": g.move, "unit": g.kind, "clean_logit": g.clean_logit,
                               "clean_score": g.clean_score}
    return result


def _pool(name: str) -> list:
    """--pool: the head atlas's sample, or a file with a FEN a line (# comments and blank lines skipped)."""
    import chess

    from analysis.heads.sample import load_sample

    if name == "atlas":
        return load_sample()
    try:
        lines = open(name, encoding="utf-8").read().splitlines()
    except OSError as exc:
        raise CommandError(f"--pool: cannot read {name}: {exc.strerror}") from None
    boards = []
    for number, line in enumerate(lines, start=1):
        if line.strip() and not line.strip().startswith("#"):
            try:
                boards.append(chess.Board(line.strip()))
            except ValueError as exc:
                raise CommandError(f"--pool {name}, line {number}: not a FEN ({exc})") from None
    if not boards:
        raise CommandError(f"--pool {name} has no FEN")
    return boards


def neuron_results(adapter, board, args, pool) -> dict:
    """What the neuron options ask for (checked in ``_check``)."""
    from analysis.lens import neurons

    kind, top, out = args.neuron_kind, args.neuron_top, {}
    if args.neurons is not None:
        out["neurons"] = [vars(a) for a in neurons.most_active(adapter, board, args.neurons, kind, top=top)]
    if args.unit_map is not None:
        layer, index = args.unit_map
        out["unit_map"] = {"layer": layer, "index": index,
                           "map": neurons.unit_map(adapter, board, layer, index, kind).tolist()}
    if args.carriers is not None:
        out["carriers"] = [vars(c) for c in neurons.carriers(adapter, board, args.carriers, kind, top=top)]
    if args.where_else is not None:
        scan = neurons.where_else(adapter, pool, *args.where_else, kind, top=top)
        out["where_else"] = {"layer": args.where_else[0], "index": args.where_else[1], "scanned": scan.scanned,
                             "top": [vars(f) for f in scan.top], "mean": scan.mean.tolist()}
    return out


def _text(result: dict) -> str:
    lines = [f"{result['family']}: {len(result['readouts'])} readout points"]
    score = result.get("score")
    for r, name in enumerate(result["readouts"]):
        top = result.get("top")
        parts = [f"{name:>10}"]
        if top is not None:
            parts.append(f"top {top[r]:<6} p {result['lens'][top[r]][r]['prob']:.3f}")
        if score is not None:
            parts.append(f"score {score[r]:.3f}")
        lines.append("  ".join(parts))
    if "ablated" in result:
        lines.extend(_ablation_text(result["ablated"], result["clean"]))
    lines.extend(_neuron_text(result))
    if "grid" in result:
        lines.append(f"grid of {result['grid_move']['uci']} (logit change when each unit is removed; * exact):")
        for l, row in enumerate(result["grid"]):
            cells = (f"{x:+.2f}{'*' if e else ' '}" for x, e in zip(row, result["exact"][l]))
            lines.append(f"  L{l}: " + " ".join(cells))
    return "\n".join(lines)


def _ablation_text(ablated: dict, clean: dict) -> list[str]:
    """The scaled unit's effect: the score, then the moves whose probability changed most."""
    head = f"{ablated['unit']} {ablated['layer']}:{ablated['index']} x {ablated['scale']:g}:"
    lines = [head + (f" score {clean['score']:.3f} -> {ablated['score']:.3f}" if clean["score"] is not None else "")]
    if ablated["policy"] is not None:
        change = sorted(ablated["policy"], key=lambda m: abs(ablated["policy"][m] - clean["policy"][m]), reverse=True)
        for move in change[:5]:
            lines.append(f"  {move:<6} p {clean['policy'][move]:.3f} -> {ablated['policy'][move]:.3f}")
    return lines


def _neuron_text(result: dict) -> list[str]:
    lines = []
    for a in result.get("neurons", []):
        lines.append(f"  unit {a['layer']}:{a['unit']:<5} peak {a['peak']:+.3f} on {a['square'] or '-'}"
                     f"  mean {a['mean']:+.3f}")
    if "unit_map" in result:
        m = result["unit_map"]
        lines.append(f"unit {m['layer']}:{m['index']} per square (rank 8 first):")
        lines.extend("  " + " ".join(f"{m['map'][8 * r + f]:+.2f}" for f in range(8)) for r in range(7, -1, -1))
    for c in result.get("carriers", []):
        exact = "" if c["exact"] is None else f"  exact {c['exact']:+.3f}"
        lines.append(f"  unit {c['layer']}:{c['unit']:<5} attribution {c['attribution']:+.3f}{exact}")
    if "where_else" in result:
        w = result["where_else"]
        lines.append(f"unit {w['layer']}:{w['index']} over {w['scanned']} positions, strongest first:")
        lines.extend(f"  {f['peak']:+.3f} on {f['square'] or '-':<3} {f['fen']}" for f in w["top"])
    return lines
