"""``value-quality`` and ``value-sanity``: how far a network's value can be trusted (analysis.eval)."""

from __future__ import annotations

import json
from pathlib import Path

from analysis.cli import CommandError
from analysis.search_catalogue import search_names


def _evaluator(model: str, device: str | None, threads: int | None = None):
    """A checkpoint's evaluator, or the material-count evaluator for ``--model material``."""
    from analysis.checkpoint import CheckpointError
    from analysis.cli.eval_cmds import set_threads
    from analysis.eval.specs import resolve_evaluator

    set_threads(threads)
    try:
        return resolve_evaluator(model, device=device)
    except (CheckpointError, ValueError, FileNotFoundError) as exc:
        raise CommandError(str(exc)) from exc


def _fmt(x: float | None, spec: str = ".4f") -> str:
    return "n/a" if x is None else format(x, spec)


def _quality_lines(name: str, payload: dict) -> list[str]:
    lines = [f"{name}: value quality on {payload['positions']} {payload['split']} positions of {payload['data']}"]
    groups = {"all": payload["overall"], **payload["by_source"]}
    lines.append(f"  {'group':>8} {'n':>6} {'MAE':>7} {'Brier':>7} {'ECE':>7} {'err W-to-move':>14} "
                 f"{'err B-to-move':>14} {'stm bias':>9}")
    for group, f in groups.items():
        signed = f["signed_error_white_view"]
        lines.append(f"  {group:>8} {f['positions']:>6} {f['mae']:>7.4f} {f['brier']:>7.4f} {f['ece']:>7.4f} "
                     f"{_fmt(signed['white_to_move'], '+.4f'):>14} {_fmt(signed['black_to_move'], '+.4f'):>14} "
                     f"{_fmt(f['side_to_move_bias'], '+.4f'):>9}")
    lines.append("  (signed errors in White's view; stm bias = (W-to-move - B-to-move) / 2)")
    if payload["plot"]:
        lines.append(f"  reliability diagram: {payload['plot']}")
    return lines


def _value_quality(args) -> int:
    from analysis.eval.reliability_plot import plot_reliability
    from analysis.eval.value_quality import load_value_samples, predict_scores, search_scores, value_quality

    if args.limit is not None and args.limit < 1:
        raise CommandError("--limit must be a positive number of positions")
    if args.nodes is not None and (args.algo is None or args.nodes < 1):
        raise CommandError("--nodes needs --algo and a positive number")
    if args.algo is not None and args.algo not in search_names():
        raise CommandError(f"unknown search {args.algo!r}; known: {', '.join(search_names())}")
    try:
        samples = load_value_samples(Path(args.data), args.split, args.limit)
    except (OSError, ValueError, KeyError) as exc:
        raise CommandError(str(exc)) from exc
    evaluator = _evaluator(args.model, args.device, args.threads)
    scores = (predict_scores(evaluator, samples.boards) if args.algo is None
              else search_scores(evaluator, samples.boards, args.algo, args.nodes))
    report = value_quality(scores, samples)
    payload = {"model": args.model, "algo": args.algo, "nodes": args.nodes, "data": args.data, "split": args.split,
               "positions": len(samples.boards), **report, "plot": None}
    if args.plot:
        try:
            payload["plot"] = str(plot_reliability(report, Path(args.plot), title=f"{Path(args.model).stem}: "
                                                   f"value calibration ({args.split} split)"))
        except OSError as exc:
            raise CommandError(f"cannot write {args.plot}: {exc}") from exc
    if args.json:
        print(json.dumps(payload, indent=2))
    else:
        print("\n".join(_quality_lines(args.model, payload)))
    return 0


def _value_sanity(args) -> int:
    from analysis.eval.value_sanity import run_sanity

    result = run_sanity(_evaluator(args.model, args.device, args.threads))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for check in result["checks"]:
            print(f"{'pass' if check['passed'] else 'FAIL'}  {check['name']}: {check['detail']}")
        failed = sum(not c["passed"] for c in result["checks"])
        print(f"{args.model}: value sanity {'passed' if result['passed'] else 'FAILED'} "
              f"({len(result['checks']) - failed}/{len(result['checks'])} checks)")
    return 0 if result["passed"] else 1


def register(subparsers) -> None:
    p = subparsers.add_parser("value-quality", help="value MAE, Brier, calibration (ECE) and side-to-move bias "
                                                    "against Stockfish on an annotated split")
    p.add_argument("--model", required=True, help="checkpoint path, or 'material' (material-count evaluator)")
    p.add_argument("--data", required=True, help="annotated dataset directory")
    p.add_argument("--split", default="test", choices=["test", "train"])
    p.add_argument("--limit", type=int, help="only the first N positions of the split")
    p.add_argument("--plot", help="write the reliability diagram here (PNG)")
    p.add_argument("--algo", help="score each position with this search's root score (an agent's own value, "
                                  "e.g. value: the best successor's), not the network's value")
    p.add_argument("--nodes", type=int, help="the search's budget in nodes (with --algo)")
    p.add_argument("--device", help="cpu, cuda, ... (default: best available)")
    p.add_argument("--threads", type=int, help="torch CPU threads (default: torch's; 1 on cores shared with "
                                               "another job)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_value_quality)

    p = subparsers.add_parser("value-sanity", help="start position, quiet openings, mirrored positions, history, "
                                                   "mates and stalemates; exit status 1 when a check fails")
    p.add_argument("--model", required=True, help="checkpoint path, or 'material' (material-count evaluator)")
    p.add_argument("--device", help="cpu, cuda, ... (default: best available)")
    p.add_argument("--threads", type=int, help="torch CPU threads (default: torch's; 1 on cores shared with "
                                               "another job)")
    p.add_argument("--json", action="store_true",
                   help='print {"passed", "checks": [{"name", "passed", "detail"}], "suite_version"}')
    p.set_defaults(handler=_value_sanity)
