"""``generate`` and ``annotate``: build a Stockfish-annotated dataset (see analysis.data)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from analysis.cli import CommandError

# analysis.data (numpy, pyarrow) is imported by the command that runs: --help stays light.


def _limit(args: argparse.Namespace, prefix: str = ""):
    """An ``analysis.engines.limit.EngineLimit`` from the engine options."""
    from analysis.engines.limit import EngineLimit

    try:
        return EngineLimit(depth=getattr(args, prefix + "depth"), nodes=getattr(args, prefix + "nodes"),
                           time=getattr(args, prefix + "movetime"))
    except ValueError as exc:
        raise CommandError(f"engine limit: {exc}") from exc


def _generate(args: argparse.Namespace) -> int:
    from analysis.data.plan import GenerateConfig, build_plan
    from analysis.data.stockfish_games import StockfishGamesConfig

    pgns: list[Path] = []
    for item in args.pgn:
        path = Path(item)
        if path.is_dir():
            pgns.extend(sorted(path.glob("*.pgn")))
        elif path.is_file():
            pgns.append(path)
        else:
            raise CommandError(f"PGN path not found: {path}")
    if args.openings and not Path(args.openings).is_dir():
        raise CommandError(f"openings directory not found: {args.openings}")
    if args.selfplay_games and not args.openings:
        raise CommandError("--selfplay-games needs --openings DIR")
    if not pgns and not args.selfplay_games and not args.mate_in_one and not (args.blunder_mates and args.openings):
        raise CommandError("no sources: give --pgn, --selfplay-games with --openings, --mate-in-one, "
                           "or --blunder-mates with --openings")
    cfg = GenerateConfig(
        pgn_files=pgns, openings_dir=Path(args.openings) if args.openings else None,
        selfplay_games=args.selfplay_games,
        selfplay=StockfishGamesConfig(limit=_limit(args), near_best=args.near_best),
        perturb_share=args.perturb_share, thinned_share=args.thinned_share, min_ply=args.min_ply,
        opening_plies=GenerateConfig.opening_plies if args.opening_plies is None else args.opening_plies,
        tactical_weight=GenerateConfig.tactical_weight if args.tactical_weight is None else args.tactical_weight, mate_in_one_positions=args.mate_in_one,
        blunder_mate_plies=args.blunder_mates,
        test_share=args.test_share,
        max_positions=args.max_positions, workers=args.workers, stockfish=args.stockfish, seed=args.seed,
    )
    try:
        summary = build_plan(cfg, Path(args.out))
    except (ValueError, FileNotFoundError) as exc:
        raise CommandError(str(exc)) from exc
    print(json.dumps(summary, indent=2))
    return 0


def _annotate(args: argparse.Namespace) -> int:
    from analysis.data.annotate import AnnotateConfig, annotate_dataset

    multipv_limit = None
    if args.multipv_depth or args.multipv_nodes or args.multipv_movetime:
        multipv_limit = _limit(args, "multipv_")
    cfg = AnnotateConfig(limit=_limit(args), multipv_share=args.multipv_share, multipv_test=not args.no_multipv_test,
                         multipv_limit=multipv_limit, workers=args.workers, shard_size=args.shard_size,
                         max_positions=args.limit, stockfish=args.stockfish,
                         refute_perturbed=not args.no_refute)
    if not 0 <= cfg.multipv_share <= 1:
        raise CommandError("--multipv-share must be in [0, 1]")
    try:
        summary = annotate_dataset(Path(args.data), cfg, progress=not args.quiet)
    except (ValueError, FileNotFoundError) as exc:
        raise CommandError(str(exc)) from exc
    print(json.dumps(summary, indent=2))
    return 0


def _engine_args(parser: argparse.ArgumentParser, prefix: str = "", default_depth: int | None = None) -> None:
    dash = prefix.replace("_", "-")
    parser.add_argument(f"--{dash}depth", dest=f"{prefix}depth", type=int, default=default_depth)
    parser.add_argument(f"--{dash}nodes", dest=f"{prefix}nodes", type=int)
    parser.add_argument(f"--{dash}movetime", dest=f"{prefix}movetime", type=float, help="seconds per position")


def register(subparsers) -> None:
    import multiprocessing as mp

    gen = subparsers.add_parser("generate", help="collect, dedup and split positions into DIR/plan.parquet")
    gen.add_argument("--out", required=True, help="dataset directory")
    gen.add_argument("--pgn", action="append", default=[], help="PGN file or directory (repeatable)")
    gen.add_argument("--openings", help="directory of ECO .tsv files, for self-play")
    gen.add_argument("--selfplay-games", type=int, default=0)
    gen.add_argument("--near-best", type=float, default=0.03, help="self-play: win-prob window for move sampling")
    gen.add_argument("--perturb-share", type=float, default=0.5, help="Giraffe random-move children per position")
    gen.add_argument("--thinned-share", type=float, default=0.0,
                     help="PGN positions given a child with random pieces removed (material counts games lack)")
    gen.add_argument("--min-ply", type=int, default=0)
    gen.add_argument("--opening-plies", type=int, default=None,
                     help="positions before this ply are kept once per game, not once overall "
                          "(default: GenerateConfig's)")
    gen.add_argument("--mate-in-one", type=int, default=0,
                     help="add N random-play positions where the side to move mates in one")
    gen.add_argument("--blunder-mates", type=int, default=0, metavar="PLIES",
                     help="add every move out of the first PLIES plies of the ECO lines and games "
                          "that allows a mate in one (the position after it)")
    gen.add_argument("--tactical-weight", type=float, default=None,
                     help="how strongly tactical positions move up the plan (0: uniform order; "
                          "default: GenerateConfig's)")
    gen.add_argument("--test-share", type=float, default=0.05)
    gen.add_argument("--max-positions", type=int)
    gen.add_argument("--workers", type=int, default=mp.cpu_count())
    gen.add_argument("--stockfish")
    gen.add_argument("--seed", type=int, default=0)
    _engine_args(gen)
    gen.set_defaults(handler=_generate)

    ann = subparsers.add_parser("annotate", help="Stockfish-annotate DIR/plan.parquet into Parquet shards (resumable)")
    ann.add_argument("--data", required=True, help="dataset directory made by `generate`")
    _engine_args(ann, default_depth=None)
    _engine_args(ann, "multipv_")
    ann.add_argument("--multipv-share", type=float, default=0.25)
    ann.add_argument("--no-multipv-test", action="store_true", help="do not give every test position action values")
    ann.add_argument("--workers", type=int, default=mp.cpu_count())
    ann.add_argument("--shard-size", type=int, default=2048)
    ann.add_argument("--limit", type=int, help="annotate only the first N planned positions")
    ann.add_argument("--no-refute", action="store_true",
                     help="do not add each perturbed child's refutation (Stockfish's best reply)")
    ann.add_argument("--stockfish")
    ann.add_argument("--quiet", action="store_true")
    ann.set_defaults(handler=_annotate)
