"""``ablation run`` and ``ablation table``: a paper's comparison at this machine's scale (analysis.ablation)."""

from __future__ import annotations

import argparse
import sys

from analysis.cli import CommandError


def _load(path: str):
    from analysis.ablation.config import load_ablation

    try:
        return load_ablation(path)
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def _run(args: argparse.Namespace) -> int:
    from analysis.ablation.run import run_ablations

    if args.no_train and args.train_only:
        raise CommandError("--no-train and --train-only leave nothing to do")
    if args.parallel is not None and args.parallel < 1:
        raise CommandError(f"--parallel must be at least 1, not {args.parallel}")
    if args.max_wall_minutes is not None and not args.max_wall_minutes > 0:
        raise CommandError(f"--max-wall-minutes must be positive, not {args.max_wall_minutes:g}")
    ablations = [(_load(path), path) for path in args.config]
    if len({cfg.name for cfg, _ in ablations}) != len(ablations):
        raise CommandError("an ablation is named twice")
    try:
        left = run_ablations(ablations, train=not args.no_train, measure=not args.train_only,
                             parallel=args.parallel,
                             cap_minutes=args.max_wall_minutes, log=lambda line: print(line, file=sys.stderr, flush=True))
    except (ValueError, FileNotFoundError) as exc:
        raise CommandError(str(exc)) from None
    if left:
        print(f"not finished: {', '.join(left)} (rerun the same command to continue)")
        return 1
    for cfg, _ in ablations:
        if args.train_only:
            print(f"{cfg.name}: every variant trained; exports in {cfg.store} (measure with --no-train)")
            continue
        print(f"{cfg.name}: every variant trained and measured; table in {cfg.doc}, files in {cfg.store}")
    return 0


def _table(args: argparse.Namespace) -> int:
    from analysis.ablation.report import write_section

    for path in args.config:
        cfg = _load(path)
        print(f"{cfg.name}: section written to {write_section(cfg, path)}")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("ablation", help="train, measure and tabulate an ablation's variants (configs/ablations/)")
    sub = p.add_subparsers(dest="ablation_command", required=True, metavar="ACTION")
    run = sub.add_parser("run", help="train every variant (rerun to resume), measure it as the shipped cards are, "
                                     "then write the cards and the table")
    run.add_argument("config", nargs="+", help="ablation files, e.g. configs/ablations/cf-position.toml (several "
                                               "share one pool of training jobs)")
    run.add_argument("--no-train", action="store_true", help="only measure and tabulate the variants already trained")
    run.add_argument("--train-only", action="store_true",
                     help="train and keep the exports, measure nothing (train on a GPU machine, measure elsewhere)")
    run.add_argument("--parallel", type=int, default=None,
                     help="variants trained (and commands measured) at once, overriding the configs' parallel")
    run.add_argument("--max-wall-minutes", type=float, default=None,
                     help="cap every training run at this many minutes (a lent machine's lease); a run stopped "
                          "early exports what it reached and the table shows its steps")
    run.set_defaults(handler=_run)
    table = sub.add_parser("table", help="rewrite the ablations' sections of docs/ablations.md from the stored results")
    table.add_argument("config", nargs="+", help="ablation files")
    table.set_defaults(handler=_table)
