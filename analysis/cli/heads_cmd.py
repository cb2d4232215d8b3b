"""``heads``: label every attention head of a network and print its scores (the head atlas)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from analysis.cli import CommandError

if TYPE_CHECKING:  # imported by the command itself: --help stays light
    from analysis.heads import HeadMeasurements


def register(subparsers) -> None:
    heads = subparsers.add_parser("heads", help="label each attention head by the pattern it follows")
    heads.add_argument("--model", required=True)
    heads.add_argument("--positions", type=int, default=None,
                       help="positions of the fixed sample to score on (default: all of it, 256)")
    heads.add_argument("--device", default=None, help="cpu or cuda (default: $SIGHTLINE_DEVICE, else auto)")
    heads.add_argument("--json", action="store_true", help='print {"layers", "heads", "labels", "lift"}')
    heads.add_argument("--full-json", action="store_true", help="print the whole atlas (as the site stores it)")
    heads.add_argument("--causal", action="store_true",
                       help="also each head's importance: mean policy KL and mean |score change| when it is "
                            "removed, over the same positions (JSON: \"importance\")")
    heads.set_defaults(handler=run_heads)


def run_heads(args: argparse.Namespace) -> int:
    from analysis.checkpoint import CheckpointError, load_evaluator
    from analysis.evaluator import NonFiniteOutput
    from analysis.heads import AtlasConfig, compute_atlas
    from analysis.heads.sample import SAMPLE_SIZE

    positions = SAMPLE_SIZE if args.positions is None else args.positions
    if not 1 <= positions <= SAMPLE_SIZE:
        raise CommandError(f"--positions must be 1 to {SAMPLE_SIZE}")
    try:
        evaluator = load_evaluator(args.model, device=args.device)
        progress = None if args.json or args.full_json else _progress
        atlas = compute_atlas(evaluator, AtlasConfig(positions=positions), progress=progress)
        importance = _importance(evaluator, positions, progress) if args.causal else None
    except (CheckpointError, NonFiniteOutput, ValueError) as exc:
        raise CommandError(str(exc)) from None
    if args.json or args.full_json:
        out = atlas.cli_dict() if args.json else atlas.to_dict()
        print(json.dumps(out if importance is None else {**out, "importance": importance.to_dict()}))
        return 0
    print_atlas(atlas, importance)
    return 0


def _importance(evaluator, positions: int, progress):
    """The causal atlas over the same sample positions (``analysis.lens.atlas``)."""
    from analysis.heads.sample import load_sample
    from analysis.lens import lens_for
    from analysis.lens.atlas import causal_atlas

    adapter = lens_for(evaluator.model, evaluator.encoding)
    report = None if progress is None else (lambda done, total: _progress(done, total, "removing heads"))
    return causal_atlas(adapter, load_sample(positions), progress=report)


def _progress(done: int, total: int, what: str = "scoring heads") -> None:
    print(f"\r{what}: {done}/{total} positions", end="\n" if done == total else "", file=sys.stderr, flush=True)


def print_atlas(atlas: "HeadMeasurements", importance=None) -> None:
    rule = atlas.rule
    print(f"{atlas.layers} layers x {atlas.heads} heads over {atlas.positions} positions; a label needs "
          f"lift >= {rule['min_lift']} and mass >= {rule['min_mass']} (layers and heads from 0)")
    for layer, row in enumerate(atlas.labels):
        for head, label in enumerate(row):
            lift = f"lift {atlas.lift[label][layer][head]:6.2f}" if label in atlas.lift else " " * 11
            effect = "" if importance is None else _effect(importance, layer, head)
            print(f"  L{layer:<2} H{head:<2}  {label:<20} {lift}  static {atlas.static[layer][head]:.2f}{effect}")
    print("per layer:")
    for label, counts in sorted(atlas.counts().items()):
        print(f"  {label:<20} {' '.join(f'{c:2d}' for c in counts)}  (total {sum(counts)})")


def _effect(importance, layer: int, head: int) -> str:
    kl = "" if importance.kl is None else f"  KL {importance.kl[layer][head]:.4f}"
    score = "" if importance.score is None else f"  |d score| {importance.score[layer][head]:.4f}"
    return kl + score
