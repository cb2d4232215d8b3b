"""``corpus build`` and ``corpus status``: the Stockfish-labelled position corpus (analysis.corpus)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from analysis.cli import CommandError

# analysis.corpus (torch, pyarrow) is imported by the command that runs: --help stays light.


def _build(args: argparse.Namespace) -> int:
    from analysis.corpus.build import RecipeMismatch, RunLimits, build_corpus
    from analysis.corpus.config import SHARED_DATA, CorpusConfig, default_maias

    data = Path(args.data) if args.data else SHARED_DATA
    if not data.is_dir():
        raise CommandError(f"reference data not found: {data} (give --data DIR)")
    if args.workers < 1:
        raise CommandError("--workers must be at least 1")
    try:
        cfg = CorpusConfig(
            seed=args.seed, nodes=args.nodes, top_k=args.top_k, games_per_maia=args.games_per_maia,
            masters_per_shard=args.masters_per_shard, temperature=args.temperature, max_plies=args.max_plies,
            opening_plies=args.opening_plies,
            maias=tuple(Path(p) for p in args.maia) if args.maia else tuple(default_maias()),
            openings_dir=data / "openings", pgn_files=tuple(sorted((data / "pgn").glob("*.pgn"))),
            puzzle_files=tuple(sorted((data / "puzzles").glob("*.csv"))),
            suite_files=tuple(sorted((data / "suites").glob("*.epd"))),
        )
        limits = RunLimits(target=args.target, max_shards=args.max_shards, max_wall_minutes=args.max_wall_minutes,
                           workers=args.workers)
        summary = build_corpus(Path(args.out), cfg, limits, stockfish=args.stockfish,
                               log=lambda line: print(line, flush=True))
    except (RecipeMismatch, ValueError, FileNotFoundError) as exc:
        raise CommandError(str(exc)) from exc
    print(json.dumps({k: v for k, v in summary.items() if k != "shards"}, indent=2))
    return 0


def _status(args: argparse.Namespace) -> int:
    from analysis.corpus.build import corpus_status

    try:
        print(json.dumps(corpus_status(Path(args.dir)), indent=2))
    except FileNotFoundError as exc:
        raise CommandError(str(exc)) from exc
    return 0


def register(subparsers) -> None:
    from analysis.corpus.config import CorpusConfig

    defaults = CorpusConfig.__dataclass_fields__
    corpus = subparsers.add_parser("corpus", help="the Stockfish-labelled position corpus (Maia self-play, masters)")
    commands = corpus.add_subparsers(dest="corpus_command", required=True, metavar="COMMAND")

    build = commands.add_parser("build", help="build or continue a corpus in DIR (resumable; shards never rewritten)")
    build.add_argument("--out", required=True, help="corpus directory (outside git)")
    build.add_argument("--seed", type=int, required=True, help="the corpus is a function of the seed and the recipe")
    build.add_argument("--target", type=int, help="start no shard once the corpus holds this many positions")
    build.add_argument("--max-shards", type=int, help="start no shard past this many in the corpus")
    build.add_argument("--max-wall-minutes", type=float, help="start no shard after this many minutes (rerun to go on)")
    build.add_argument("--workers", type=int, default=1, help="processes, one shard each at a time (torch threads 1)")
    build.add_argument("--nodes", type=int, default=defaults["nodes"].default, help="Stockfish nodes per position")
    build.add_argument("--top-k", type=int, default=defaults["top_k"].default, help="Stockfish lines (multipv) kept")
    build.add_argument("--games-per-maia", type=int, default=defaults["games_per_maia"].default,
                       help="self-play games per Maia per shard")
    build.add_argument("--masters-per-shard", type=int, default=defaults["masters_per_shard"].default,
                       help="master games per shard, in file order")
    build.add_argument("--temperature", type=float, default=defaults["temperature"].default,
                       help="Maia policy temperature for sampling moves")
    build.add_argument("--max-plies", type=int, default=defaults["max_plies"].default, help="self-play ply cap")
    build.add_argument("--opening-plies", type=int, default=defaults["opening_plies"].default,
                       help="positions before this ply are kept once per game, not once overall")
    build.add_argument("--maia", action="append", help="a Maia checkpoint (repeatable; default the three shipped)")
    build.add_argument("--data", help="reference data: openings/, pgn/, puzzles/, suites/ (default ../shared/data)")
    build.add_argument("--stockfish", help="Stockfish binary (default: on PATH or in /usr/games)")
    build.set_defaults(handler=_build)

    status = commands.add_parser("status", help="a corpus's recipe, counts, size and labelling cost")
    status.add_argument("dir", help="corpus directory")
    status.set_defaults(handler=_status)
