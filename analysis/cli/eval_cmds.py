"""``puzzles``, ``sts``, ``metrics``, ``match`` and ``report``: measure agents (see analysis.eval)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from analysis.cli import CommandError
from analysis.variants import VARIANTS


def _agent(model: str, algo: str | None, nodes: int | None, device: str | None, movetime_ms: int | None = None):
    from analysis.checkpoint import CheckpointError
    from analysis.eval.specs import parse_spec, resolve_agent

    if not parse_spec(model).builtin and not algo:
        raise CommandError("--algo is required with a model checkpoint")
    try:
        return resolve_agent(model, algo=algo, nodes=nodes, device=device, movetime_ms=movetime_ms)
    except (ValueError, CheckpointError, FileNotFoundError) as exc:
        raise CommandError(str(exc)) from exc


def set_threads(threads: int | None) -> None:
    """torch's CPU threads for this process; on cores shared with other jobs, 1 is much faster."""
    if threads is None:
        return
    if threads < 1:
        raise CommandError("--threads must be at least 1")
    import torch

    torch.set_num_threads(threads)


def _emit(args, payload: dict, lines: list[str]) -> None:
    if args.json:
        print(json.dumps(payload, indent=2))
    else:
        print("\n".join(lines))


def _run_suite(args, load, run, path: Path):
    """Load a test suite, play the chosen agent through it, and return (agent name, report)."""
    set_threads(args.threads)
    for name in ("every", "movetime"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            raise CommandError(f"--{name} must be at least 1")
    try:
        items = load(path, None if args.every else args.limit)
    except (OSError, ValueError) as exc:
        raise CommandError(str(exc)) from exc
    if args.every:  # every k-th item, spread over the suite's themes, then --limit of those
        items = items[::args.every][:args.limit]
    agent = _agent(args.model, args.algo, args.nodes, args.device, args.movetime)
    try:
        return agent.name, run(items, agent.choose, progress=not args.json)
    except ValueError as exc:  # a search that refuses the network (policy without a policy head), as search_cmds
        raise CommandError(str(exc)) from None
    finally:
        agent.close()


def _puzzles(args) -> int:
    from analysis.eval.puzzles import load_puzzles, run_puzzles

    name, report = _run_suite(args, load_puzzles, run_puzzles, Path(args.csv))
    payload = {"agent": name, **report.to_json()}
    lines = [f"{name}: {report.solved}/{report.total} puzzles solved ({100 * report.accuracy:.1f}%)"]
    lines += [f"  {k:>10}: {v['solved']}/{v['total']} ({100 * v['accuracy']:.1f}%)" for k, v in payload["buckets"].items()]
    _emit(args, payload, lines)
    return 0


def _sts(args) -> int:
    from analysis.eval.sts import load_sts, run_sts

    name, report = _run_suite(args, load_sts, run_sts, Path(args.epd))
    payload = {"agent": name, **report.to_json()}
    lines = [f"{name}: STS {report.score}/{report.maximum}"]
    lines += [f"  {t}: {v['score']}/{v['maximum']}" for t, v in payload["themes"].items()]
    _emit(args, payload, lines)
    return 0


def _metrics(args) -> int:
    from analysis.checkpoint import CheckpointError
    from analysis.eval.agents import MaterialGreedyAgent
    from analysis.eval.static_metrics import evaluate_static, evaluate_static_greedy, load_test_positions
    from analysis.eval.specs import MATERIAL_GREEDY, parse_spec, resolve_evaluator

    set_threads(args.threads)
    try:
        positions = load_test_positions(Path(args.data), args.limit)
    except (OSError, ValueError) as exc:
        raise CommandError(str(exc)) from exc
    if parse_spec(args.model).kind in ("material", "material-greedy"):
        report = evaluate_static_greedy(MaterialGreedyAgent(), positions)
        name = MATERIAL_GREEDY
    else:
        try:
            evaluator = resolve_evaluator(args.model, device=args.device)
            report = evaluate_static(evaluator, args.algo, positions, progress=not args.json)
        except (ValueError, CheckpointError, FileNotFoundError) as exc:
            raise CommandError(str(exc)) from exc
        name = f"{args.model}:{args.algo}"
    payload = {"agent": name, **report.to_json()}
    _emit(args, payload, [f"{name}: action accuracy {100 * report.action_accuracy:.1f}%, "
                          f"Kendall tau {report.kendall_tau:.3f} over {report.positions} test positions"])
    return 0


def _match_openings(args) -> list:
    """ECO lines for chess; the legal two-ply lines for Gardner chess, which has no book."""
    from analysis.data.sources import eco_openings
    from analysis.eval.match import gardner_openings

    if args.variant == "gardner":
        if args.openings:
            raise CommandError("--openings is for 8x8 chess: a Gardner match starts from the legal two-ply lines")
        return gardner_openings()
    if not args.openings:
        raise CommandError("--openings DIR (ECO .tsv files) is required for an 8x8 match")
    try:
        return eco_openings(Path(args.openings))
    except (OSError, FileNotFoundError) as exc:
        raise CommandError(str(exc)) from exc


def _match(args) -> int:
    from analysis.eval.match import play_match

    openings = _match_openings(args)
    agents = []
    try:
        for spec in (args.a, args.b):
            agents.append(_spec_agent(spec, args.device))
        pgn = Path(args.pgn) if args.pgn else None
        started = time.time()
        result = play_match(agents[0], agents[1], openings, args.games, seed=args.seed, max_plies=args.max_plies,
                            pgn_path=pgn, progress=not args.json, variant=args.variant)
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    finally:
        for agent in agents:
            agent.close()
    payload = {**result.summary(), "seconds": round(time.time() - started, 1), "pgn": args.pgn}
    s = payload
    _emit(args, payload, [f"{s['a']} vs {s['b']}: +{s['wins']} ={s['draws']} -{s['losses']} "
                          f"(score {100 * s['score']:.1f}%), Elo difference {s['elo_diff']:+.0f} "
                          f"[95% CI {s['ci95'][0]:+.0f}, {s['ci95'][1]:+.0f}]"
                          + (f"; games in {args.pgn}" if args.pgn else "")])
    return 0


def _spec_agent(spec: str, device: str | None):
    from analysis.checkpoint import CheckpointError
    from analysis.eval.specs import resolve_agent

    try:
        return resolve_agent(spec, device=device)
    except (ValueError, CheckpointError, FileNotFoundError) as exc:
        raise CommandError(f"{spec}: {exc}") from exc


def _report(args) -> int:
    from analysis.checkpoint import CheckpointError, read_header
    from analysis.eval.report import render_markdown

    try:
        meta, _ = read_header(Path(args.model))
    except (CheckpointError, OSError) as exc:
        raise CommandError(str(exc)) from exc
    if not meta.metrics:
        raise CommandError(f"{args.model}: no measured metrics in its metadata (see attach-metrics)")
    print(render_markdown(meta.metrics), end="")
    return 0


def _attach(args) -> int:
    from analysis.checkpoint import CheckpointError
    from analysis.eval.report import attach_metrics

    metrics = {}
    for item in args.result:
        name, eq, path = item.partition("=")
        if not eq:
            raise CommandError(f"--result takes NAME=FILE.json, got {item!r}")
        try:
            metrics[name] = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise CommandError(f"{path}: {exc}") from exc
    try:
        merged = attach_metrics(Path(args.model), metrics)
    except CheckpointError as exc:
        raise CommandError(str(exc)) from exc
    print(f"{args.model}: metrics {', '.join(sorted(merged))}")
    return 0


def register(subparsers) -> None:
    def common(p, model_required=True):
        p.add_argument("--model", required=model_required,
                       help="checkpoint path, or material-greedy (1-ply baseline)")
        p.add_argument("--algo", help="search name from analysis.search (policy, value, mcts, ...)")
        p.add_argument("--nodes", type=int, help="search budget in nodes")
        p.add_argument("--device", help="cpu, cuda, ... (default: best available)")
        p.add_argument("--limit", type=int, help="only the first N items")
        p.add_argument("--threads", type=int, help="torch CPU threads (default: torch's, one per core; "
                                                   "use 1 on cores shared with another job, e.g. training)")
        p.add_argument("--json", action="store_true", help="print one JSON object")

    def suite(p):
        p.add_argument("--movetime", type=int, metavar="MS", help="search time per move in milliseconds "
                                                                  "(with --nodes: whichever ends first)")
        p.add_argument("--every", type=int, metavar="K", help="only every K-th item (spread over the file; "
                                                               "--limit then counts those)")

    p = subparsers.add_parser("puzzles", help="Lichess puzzle accuracy (ChessBench rule), per 400-rating bucket")
    common(p)
    suite(p)
    p.add_argument("--csv", required=True, help="Lichess puzzle CSV")
    p.set_defaults(handler=_puzzles)

    p = subparsers.add_parser("sts", help="Strategic Test Suite score out of 15,000, per theme")
    common(p)
    suite(p)
    p.add_argument("--epd", required=True, help="STS EPD file (c8 points, c9 UCI moves)")
    p.set_defaults(handler=_sts)

    p = subparsers.add_parser("metrics", help="action accuracy and Kendall tau on an annotated test split")
    common(p)
    p.add_argument("--data", required=True, help="annotated dataset directory")
    p.set_defaults(handler=_metrics)

    p = subparsers.add_parser("match", help="play A against B from ECO openings, colours swapped; Elo difference")
    p.add_argument("--a", required=True, help="MODEL:ALGO[:NODES], material-greedy or stockfish:elo=N")
    p.add_argument("--b", required=True, help="same forms as --a")
    p.add_argument("--games", type=int, default=100)
    p.add_argument("--variant", choices=VARIANTS, default="chess",
                   help="gardner: 5x5 Gardner chess (Stockfish cannot play it)")
    p.add_argument("--openings", help="directory of ECO .tsv files (8x8 only)")
    p.add_argument("--pgn", help="write the games here")
    p.add_argument("--max-plies", type=int, default=400)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_match)

    p = subparsers.add_parser("report", help="a checkpoint's measured metrics as the Markdown tables of a model card")
    p.add_argument("--model", required=True, help="checkpoint whose metadata holds the metrics")
    p.set_defaults(handler=_report)

    p = subparsers.add_parser("attach-metrics", help="store measured results (JSON files) in a checkpoint's metadata")
    p.add_argument("--model", required=True, help="checkpoint to update (weights are kept as they are)")
    p.add_argument("--result", action="append", required=True, metavar="NAME=FILE.json",
                   help="a JSON result from puzzles/sts/metrics/match --json (repeatable)")
    p.set_defaults(handler=_attach)
