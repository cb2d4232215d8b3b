"""``lens``: take a network apart on one position (logit lens, ablation and steering, the causal grid,
the attention split, neurons), through the lens's contract: each option is a request of
``analysis.lens.requests`` checked against the network's ``LensDescription`` before anything is
computed, and answered by ``analysis.lens.answers``.

JSON contract (``--json``): ``network``, ``fen``, ``about`` (the description, as the site's
``GET .../lens/`` gives it), then one entry per quantity asked, each the site's answer to the same
request (``request`` and the answer's fields), for the side to move: ``lens`` always (the logit
lens), ``ablate`` (``--ablate L:I --scale S``), ``grid`` (``--grid UCI``), ``split`` (``--split L``),
``neurons`` (``--neurons L``), ``neuron`` (``--unit-map L:I``), ``carriers`` (``--carriers UCI``) and
``where_else`` (``--where-else L:I [--pool FILE]``). Layers and units count from 0. The CLI's ``lens``
also holds ``logits``: {uci: [logit per readout]} for every legal move. With ``--patch-from FEN
--patch-point P [--patch-squares all|e4,d5]`` the ``lens`` entry is that of the patched pass (its
``request`` says so under ``patch``): with all squares its last readout is FEN's own output for
every move legal in both positions.
"""

from __future__ import annotations

import argparse
import json

from analysis.cli import CommandError


def register(subparsers) -> None:
    p = subparsers.add_parser("lens", help="logit lens, unit ablation/steering, causal grid, attention split and "
                                           "neurons on one position")
    p.add_argument("--model", required=True)
    p.add_argument("--fen", required=True)
    p.add_argument("--moves", nargs="+", default=[], metavar="UCI",
                   help="moves to follow (up to 4): where each settles as the top move")
    p.add_argument("--readout", default=None, help="also list the top moves at this readout point")
    p.add_argument("--ablate", default=None, metavar="L:I", help="scale unit I of layer L (from 0)")
    p.add_argument("--unit", default=None, help="what --ablate and --grid address (default head): head, mlp, or a "
                   "kind the family adds (block and channel for lc0 SE-ResNets, group for Giraffe); the neuron "
                   "options read mlp by default, else the first kind with activations")
    p.add_argument("--scale", type=float, default=0.0,
                   help="0 removes the unit's write, 1 is clean, 2 doubles, -1 flips")
    p.add_argument("--grid", default=None, metavar="UCI", help="the causal grid of this move")
    p.add_argument("--top", type=int, default=None,
                   help="grid by attribution patching, re-measuring only the TOP strongest exactly (default: "
                        "every unit exactly when there are at most 256, else the top 16)")
    p.add_argument("--exact", action="store_true", help="grid: remove every unit exactly, however many")
    p.add_argument("--split", type=int, default=None, metavar="L",
                   help="layer L's attention taken apart: content, position term and the final map")
    p.add_argument("--neurons", type=int, default=None, metavar="L", help="layer L's most active units here")
    p.add_argument("--unit-map", default=None, metavar="L:I", help="unit I of layer L: its activation per square")
    p.add_argument("--carriers", default=None, metavar="UCI",
                   help="every unit's attribution to this move's logit, the strongest re-measured exactly")
    p.add_argument("--where-else", default=None, metavar="L:I", help="where else unit I of layer L fires over --pool")
    p.add_argument("--pool", default="atlas", metavar="FILE",
                   help="--where-else's positions: atlas (the head atlas's 256) or a file with a FEN a line")
    p.add_argument("--neuron-top", type=int, default=None, metavar="N",
                   help="how many units or positions the neuron options list (1 to 32; default 10 units for "
                        "--neurons, 8 for --carriers and --where-else)")
    p.add_argument("--patch-from", default=None, metavar="FEN",
                   help="the logit lens of a patched pass: --patch-point on --patch-squares taken from this "
                        "position's pass (the corrupted copy; same side to move)")
    p.add_argument("--patch-point", default=None, metavar="P", help="the readout point patched (e.g. 3.block)")
    p.add_argument("--patch-squares", default="all", metavar="all|e4,d5",
                   help="real squares patched: all (the whole point) or square names (default all)")
    p.add_argument("--device", default=None, help="cpu or cuda (default: $SIGHTLINE_DEVICE, else auto)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=run_lens)


def _parse_unit(text: str, option: str = "--ablate") -> tuple[int, int]:
    try:
        layer, index = (int(part) for part in text.split(":"))
    except ValueError:
        raise CommandError(f"{option} wants LAYER:INDEX (two integers from 0), not {text!r}") from None
    return layer, index


def run_lens(args: argparse.Namespace) -> int:
    from analysis.checkpoint import CheckpointError, load_evaluator
    from analysis.lens import LensError, lens_for
    from analysis.lens.answers import answer
    from analysis.lens.description import describe_adapter

    from analysis.positions import board_from_fen

    try:
        board = board_from_fen(args.fen)  # the site's FEN rules
    except ValueError as exc:
        raise CommandError(f"--fen: {exc}") from None
    queries = _queries(args)
    try:
        evaluator = load_evaluator(args.model, device=args.device)
        adapter = lens_for(evaluator.model, evaluator.encoding)
        description = describe_adapter(adapter)
        requests = _requests(queries, description, board, args)
        result = {"network": args.model, "fen": board.fen(), "about": description.to_json()}
        for request in requests:
            shown = {k: v for k, v in request.to_json().items() if k != "fens"}
            result[request.quantity] = {"request": shown, **answer(adapter, board, request)}
    except (CheckpointError, LensError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    print(json.dumps(result) if args.json else _text(result))
    return 0


def _queries(args: argparse.Namespace) -> list[tuple[str, dict]]:
    """(quantity, query) for each quantity the options ask for, the logit lens first: the same
    queries the site's API takes (``analysis.lens.requests``)."""
    unit = {"unit": args.unit} if args.unit else {}
    top = {"top": args.neuron_top} if args.neuron_top is not None else {}
    patch = {} if args.patch_from is None else {"patch_from": args.patch_from, "patch_point": args.patch_point,
                                                 "patch_squares": args.patch_squares}
    out = [("lens", {"moves": args.moves, "readout": args.readout, **patch})]
    if args.ablate is not None:
        layer, index = _parse_unit(args.ablate)
        out.append(("ablate", {**unit, "layer": layer, "index": index, "scale": args.scale}))
    if args.grid is not None:
        out.append(("grid", {**unit, "move": args.grid}))
    if args.split is not None:
        out.append(("split", {"layer": args.split}))
    if args.neurons is not None:
        out.append(("neurons", {**unit, "layer": args.neurons, **top}))
    if args.unit_map is not None:
        layer, index = _parse_unit(args.unit_map, "--unit-map")
        out.append(("neuron", {**unit, "layer": layer, "index": index}))
    if args.carriers is not None:
        out.append(("carriers", {**unit, "move": args.carriers, **top}))
    if args.where_else is not None:
        layer, index = _parse_unit(args.where_else, "--where-else")
        pool = "atlas" if args.pool == "atlas" else "fens"
        out.append(("where_else", {**unit, "layer": layer, "index": index, **top, "pool": pool}))
    return out


def _requests(queries, description, board, args) -> list:
    """Every request checked before anything is computed (``LensError`` on the first bad one)."""
    from dataclasses import replace

    from analysis.lens.requests import parse

    pool = _pool(args.pool) if args.where_else is not None and args.pool != "atlas" else None
    requests = [parse(quantity, query, description, board, pool) for quantity, query in queries]
    return [replace(r, top=args.top, exact=args.exact) if r.quantity == "grid"
            else replace(r, every_move=True) if r.quantity == "lens" else r for r in requests]


def _pool(name: str) -> list[str]:
    """--pool FILE: a FEN a line (# comments and blank lines skipped), read as the site reads an upload."""
    from analysis.lens.checks import parse_fens

    try:
        text = open(name, encoding="utf-8").read()
    except OSError as exc:
        raise CommandError(f"--pool: cannot read {name}: {exc.strerror}") from None
    return parse_fens(text)


def _text(result: dict) -> str:
    lens = result["lens"]
    lines = [f"{result['about']['family']}: {len(lens['readouts'])} readout points"]
    for r, name in enumerate(lens["readouts"]):
        parts = [f"{name:>10}"]
        if lens["top"] is not None:
            parts.append(f"top {lens['top'][r]:<6} p {lens['top_prob'][r]:.3f}")
        if lens["score"] is not None:
            parts.append(f"score {lens['score'][r]:.3f}")
        lines.append("  ".join(parts))
    if "readout" in lens:
        lines.append(f"top moves at {lens['readout']['name']}: "
                     + ", ".join(f"{uci} {p:.3f}" for uci, p in lens["readout"]["top"]))
    for part in (_ablation_text, _grid_text, _neuron_text):
        lines.extend(part(result))
    return "\n".join(lines)


def _ablation_text(result: dict) -> list[str]:
    """The scaled unit's effect: the score, then the moves whose probability changed most."""
    if "ablate" not in result:
        return []
    a, asked = result["ablate"], result["ablate"]["request"]
    head = f"{asked['unit']} {asked['layer']}:{asked['index']} x {asked['scale']:g}:"
    if a["clean_score"] is not None:
        head += f" score {a['clean_score']:.3f} -> {a['scaled_score']:.3f}"
    lines = [head]
    change = sorted(a["policy"], key=lambda row: abs(row["scaled"] - row["clean"]), reverse=True)
    lines.extend(f"  {row['uci']:<6} p {row['clean']:.3f} -> {row['scaled']:.3f}" for row in change[:5])
    return lines


def _grid_text(result: dict) -> list[str]:
    if "grid" not in result:
        return []
    g = result["grid"]
    lines = [f"grid of {g['move']} (logit change when each {g['unit']} is removed; * exact):"]
    for l, row in enumerate(g["logit"]):
        cells = (f"{x:+.2f}{'*' if e else ' '}" for x, e in zip(row, g["exact"][l]))
        lines.append(f"  L{l}: " + " ".join(cells))
    return lines


def _neuron_text(result: dict) -> list[str]:
    lines = []
    if "neurons" in result:
        layer = result["neurons"]["request"]["layer"]
        lines.extend(f"  unit {layer}:{a['index']:<5} peak {a['peak']:+.3f} on {a['square'] or '-'}"
                     f"  mean {a['mean']:+.3f}" for a in result["neurons"]["units"])
    if "neuron" in result:
        m, asked = result["neuron"], result["neuron"]["request"]
        lines.append(f"unit {asked['layer']}:{asked['index']} per square (rank 8 first):")
        lines.extend("  " + " ".join(f"{m['map'][8 * r + f]:+.2f}" for f in range(8)) for r in range(7, -1, -1))
    for c in result.get("carriers", {}).get("carriers", []):
        exact = "" if c["exact"] is None else f"  exact {c['exact']:+.3f}"
        lines.append(f"  unit {c['layer']}:{c['index']:<5} attribution {c['attribution']:+.3f}{exact}")
    if "where_else" in result:
        w, asked = result["where_else"], result["where_else"]["request"]
        lines.append(f"unit {asked['layer']}:{asked['index']} over {w['scanned']} positions, strongest first:")
        lines.extend(f"  {f['peak']:+.3f} on {f['square'] or '-':<3} {f['fen']}" for f in w["top"])
    return lines
