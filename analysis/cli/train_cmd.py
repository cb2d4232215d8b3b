"""``train``: supervised training from a TOML config (see analysis.train.loop)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from analysis.cli import CommandError


def _train(args: argparse.Namespace) -> int:
    from analysis.train.config import load_config
    from analysis.train.loop import train

    overrides = {"steps": args.steps, "out": args.out, "data": args.data, "export": args.export,
                 "device": args.device, "init_from": args.init_from, "max_wall_minutes": args.max_wall_minutes,
                 "batch_size": args.batch_size}
    try:
        cfg = load_config(Path(args.config), **overrides)
        if not cfg.data.exists():
            raise CommandError(f"dataset directory not found: {cfg.data}")
        if cfg.init_from is not None and not cfg.init_from.exists() and not (cfg.out / "state.pt").exists():
            raise CommandError(f"init_from checkpoint not found: {cfg.init_from}")
        path = train(cfg, progress=not args.quiet)
    except (ValueError, FileNotFoundError) as exc:
        raise CommandError(str(exc)) from exc
    if os.environ.get("RANK", "0") == "0":  # under torchrun only rank 0 writes
        print(f"exported {path}")
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("train", help="train a model from a TOML config (torchrun for several GPUs)")
    parser.add_argument("--config", required=True, help="TOML file, e.g. configs/cf-small.toml")
    parser.add_argument("--steps", type=int, help="override the config's step count")
    parser.add_argument("--data", help="override the dataset directory")
    parser.add_argument("--out", help="override the run directory")
    parser.add_argument("--export", help="override the exported checkpoint path")
    parser.add_argument("--init-from", help="override the checkpoint the run starts from (fine-tuning)")
    parser.add_argument("--max-wall-minutes", type=float, help="override the run's time cap")
    parser.add_argument("--batch-size", type=int, help="override the batch size")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--quiet", action="store_true")
    parser.set_defaults(handler=_train)
