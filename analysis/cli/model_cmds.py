"""``init``, ``describe`` and ``evaluate``: make, inspect and query a checkpoint."""

from __future__ import annotations

import argparse
import json
import math
import platform

from analysis.cli import CommandError
from analysis.models import DEFAULT_FAMILY, FAMILIES, get_family

# Parsing (and every --help) imports nothing heavy: torch, numpy, python-chess and the
# checkpoint code are imported by the command that runs (``analysis.cli`` explains why).
STARTING_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


def register(subparsers) -> None:
    init = subparsers.add_parser("init", help="write a randomly initialised (untrained) checkpoint")
    init.add_argument("--family", default=DEFAULT_FAMILY, choices=sorted(FAMILIES))
    init.add_argument("--preset", required=True, help="e.g. cf-tiny, cf-small, cf-6m, cf-240m")
    init.add_argument("--out", required=True, help="path of the .safetensors file to write")
    init.add_argument("--seed", type=int, default=0)
    init.set_defaults(handler=run_init)

    describe = subparsers.add_parser("describe", help="family, config, parameters, provenance, metrics")
    describe.add_argument("--model", required=True)
    describe.add_argument("--json", action="store_true")
    describe.set_defaults(handler=run_describe)

    evaluate = subparsers.add_parser("evaluate", help="evaluate one position")
    evaluate.add_argument("--model", required=True)
    evaluate.add_argument("--fen", default=STARTING_FEN)
    evaluate.add_argument("--moves", nargs="*", default=[], metavar="UCI", help="moves played from the FEN")
    evaluate.add_argument("--attention", action="store_true", help="include per-layer, per-head attention maps")
    evaluate.add_argument("--temperature", type=float, default=1.0, help="policy softmax temperature")
    evaluate.add_argument("--device", default=None, help="cpu or cuda (default: $SIGHTLINE_DEVICE, else auto)")
    evaluate.add_argument("--json", action="store_true")
    evaluate.set_defaults(handler=run_evaluate)


def run_init(args: argparse.Namespace) -> int:
    import torch

    from analysis.checkpoint import save_checkpoint

    family = get_family(args.family)
    if args.preset not in family.presets:
        raise CommandError(f"unknown preset {args.preset!r} for {args.family}; choose from {', '.join(family.presets)}")
    torch.manual_seed(args.seed)
    model = family.build(family.presets[args.preset])
    provenance = {"source": "random initialisation", "preset": args.preset, "seed": args.seed,
                  "torch": torch.__version__, "host": platform.node()}
    try:
        path = save_checkpoint(args.out, model, trained=False, provenance=provenance)
    except OSError as exc:
        raise CommandError(f"cannot write {args.out}: {exc.strerror}") from None
    print(f"wrote {path} ({args.family} {args.preset}, {_count(model):,} parameters, untrained)")
    return 0


def run_describe(args: argparse.Namespace) -> int:
    from analysis.checkpoint import describe_file

    meta, tensors = _checked(describe_file, args.model)
    parameters = sum(math.prod(shape) for _, shape in tensors.values())
    info = {"family": meta.family, "trained": meta.trained, "input_encoding": meta.input_encoding,
            "parameters": parameters, "config": meta.config, "provenance": meta.provenance, "metrics": meta.metrics}
    if args.json:
        print(json.dumps(info, indent=2, sort_keys=True))
        return 0
    print(f"{args.model}: {meta.family}, {parameters:,} parameters, {'trained' if meta.trained else 'UNTRAINED'}")
    print(f"input encoding: {meta.input_encoding}")
    for title, section in (("config", meta.config), ("provenance", meta.provenance), ("metrics", meta.metrics)):
        print(f"{title}:")
        for key, value in sorted(section.items()):
            print(f"  {key}: {value}")
        if not section:
            print("  (none)")
    return 0


def run_evaluate(args: argparse.Namespace) -> int:
    from analysis.checkpoint import CheckpointError, load_evaluator
    from analysis.evaluator import NonFiniteOutput

    board = board_from_args(args.fen, args.moves)
    if args.temperature <= 0:
        raise CommandError("--temperature must be positive")
    try:
        evaluator = load_evaluator(args.model, device=args.device)
    except CheckpointError as exc:
        raise CommandError(str(exc)) from None
    except ValueError as exc:  # e.g. CUDA asked for without a GPU
        raise CommandError(str(exc)) from None
    if args.attention and evaluator.capabilities.attention is None:
        raise CommandError(f"{evaluator.name} has no attention maps")
    try:
        evaluation = evaluator.evaluate([board], attention=args.attention, temperature=args.temperature)[0]
    except NonFiniteOutput as exc:
        raise CommandError(str(exc)) from None
    result = {
        "fen": board.fen(), "trained": evaluator.trained, "score": evaluation.score,
        "wdl": list(evaluation.wdl) if evaluation.wdl else None,
        "policy": {m.uci(): p for m, p in sorted(evaluation.policy.items(), key=lambda kv: -kv[1])},
    }
    if args.attention:
        maps = evaluation.attention
        result["attention"] = {"layers": int(maps.shape[0]), "heads": int(maps.shape[1]),
                               "maps": maps.round(6).tolist()}
    if args.json:
        print(json.dumps(result))
        return 0
    label = "" if evaluator.trained else "  [UNTRAINED network: random weights]"
    print(f"{board.fen()}{label}")
    if evaluation.wdl:
        w, d, l = evaluation.wdl
        print(f"WDL (side to move): win {w:.1%}  draw {d:.1%}  loss {l:.1%}   expected score {evaluation.score:.3f}")
    for move, p in evaluation.top_moves(5):
        print(f"  {board.san(move):<8} {move.uci():<6} {p:6.1%}")
    if not evaluation.policy:
        print("  no legal moves: " + ("checkmate" if board.is_checkmate() else "stalemate"))
    if args.attention:
        print_attention(evaluation.attention)
    return 0


def print_attention(maps, top: int = 3) -> None:
    """Each head in one line: how spread its attention is (mean entropy over the 64 query
    squares, against a uniform head's 6 bits) and the key squares it attends to most overall."""
    import chess
    import numpy as np

    layers, heads = maps.shape[:2]
    print(f"attention: {layers} layers x {heads} heads, 64 x 64 maps (query square -> key square, "
          f"real squares; --json prints them)")
    p = np.clip(maps.astype(np.float64), 1e-12, 1.0)
    entropy = -(p * np.log2(p)).sum(axis=-1).mean(axis=-1)  # layers x heads, bits
    received = maps.mean(axis=2)  # layers x heads x 64: mean attention each key square gets
    for layer in range(layers):
        for head in range(heads):
            keys = np.argsort(received[layer, head])[::-1][:top]
            most = ", ".join(f"{chess.square_name(int(k))} {received[layer, head, k]:.1%}" for k in keys)
            print(f"  L{layer:<2} H{head:<2} entropy {entropy[layer, head]:4.2f} bits  most attended: {most}")


def board_from_args(fen: str, moves: list[str]):
    """A ``chess.Board`` from a FEN and UCI moves played from it, or a one-line CommandError."""
    from analysis.positions import board_from_input

    try:
        return board_from_input(fen, moves)
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def _checked(fn, path):
    from analysis.checkpoint import CheckpointError

    try:
        return fn(path)
    except CheckpointError as exc:
        raise CommandError(str(exc)) from None


def _count(model) -> int:
    return sum(p.numel() for p in model.parameters())
