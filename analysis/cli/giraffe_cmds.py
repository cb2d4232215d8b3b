"""``giraffe-train``: Giraffe's bootstrap, TD-Leaf and move-evaluator training (see
analysis.train.giraffe)."""

from __future__ import annotations

import argparse

from analysis.cli import CommandError


def _train(args) -> int:
    from analysis.train.giraffe.config import load_config
    from analysis.train.giraffe.run import STAGES, train

    try:
        cfg = load_config(args.config, out=args.out, max_wall_minutes=args.max_wall_minutes)
        if args.iterations is not None:
            cfg.td.iterations = args.iterations
        stages = STAGES if args.stage == "all" else (args.stage,)
        train(cfg, stages, progress=not args.quiet, log=lambda line: print(line, flush=True))
    except (OSError, ValueError) as exc:
        raise CommandError(str(exc)) from exc
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("giraffe-train", help="train a Giraffe evaluator and move evaluator (resumable)")
    p.add_argument("--config", required=True, help="a configs/giraffe*.toml file")
    p.add_argument("--stage", choices=("all", "bootstrap", "td", "move"), default="all")
    p.add_argument("--out", help="run directory (overrides the config's)")
    p.add_argument("--iterations", type=int, help="TD-Leaf iterations in all (overrides the config's)")
    p.add_argument("--max-wall-minutes", type=float, help="stop cleanly after this long; run again to resume")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(handler=_train)
