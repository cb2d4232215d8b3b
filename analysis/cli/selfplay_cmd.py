"""``selfplay``: self-play training with Gumbel MuZero from a TOML config (see analysis.train.selfplay)."""

from __future__ import annotations

import argparse
from pathlib import Path

from analysis.cli import CommandError


def _selfplay(args: argparse.Namespace) -> int:
    from analysis.checkpoint import CheckpointError  # torch: only when the command runs
    from analysis.train.selfplay import selfplay_train
    from analysis.train.selfplay_config import load_selfplay_config

    overrides = {"out": args.out, "iterations": args.iterations, "games_per_iteration": args.games, "workers": args.workers,
                 "max_wall_minutes": args.max_wall_minutes, "device": args.device, "init_from": args.init_from}
    try:
        cfg = load_selfplay_config(Path(args.config), **overrides)
        if cfg.init_from and not cfg.init_from.is_file():
            raise CommandError(f"init_from checkpoint not found: {cfg.init_from}")
        path = selfplay_train(cfg, progress=not args.quiet)
    except (ValueError, FileNotFoundError, CheckpointError) as exc:
        raise CommandError(str(exc)) from exc
    print(f"exported {path}")
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("selfplay", help="self-play training (Gumbel MuZero), e.g. 5x5 Gardner chess")
    parser.add_argument("--config", required=True, help="TOML file, e.g. configs/selfplay-gardner-cpu.toml")
    parser.add_argument("--out", help="override the run directory")
    parser.add_argument("--iterations", type=int)
    parser.add_argument("--games", type=int, help="games per iteration")
    parser.add_argument("--max-wall-minutes", type=float)
    parser.add_argument("--init-from", help="start from this checkpoint (e.g. a 5x5 network, for 8x8)")
    parser.add_argument("--workers", type=int, help="processes playing games side by side")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--quiet", action="store_true")
    parser.set_defaults(handler=_selfplay)
