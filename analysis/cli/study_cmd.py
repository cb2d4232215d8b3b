"""``study``: a study method over a position set (``analysis.studies``), as the site runs it.

``python -m analysis study METHOD --model M [--sparring S] (--csv F | --puzzles NAME | --pgn F | --fens F)
[--limit N] [--seed K] [--set KEY=VALUE ...] [--method EXTRA ...] --json``

JSON (``--json``): the study's result (``spec``, ``code_version``, ``items``, ``summary``) with the
summary's method-specific keys also at the top level (``lookahead``: ``puzzles``, ``points``,
``patching``, the contract of issue 38). ``--method EXTRA`` runs another registered method on the same
network, positions, settings and seed, and adds its top-level keys (``--method probe`` adds ``probe``)
and its result under ``studies``. Bad input: one line, exit 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

from analysis.cli import CommandError

SUMMARY_SHOWN_APART = ("table", "figures")


def register(subparsers) -> None:
    p = subparsers.add_parser("study", help="a study method (lookahead, forgotten, ...) over a position set")
    p.add_argument("study_method", metavar="METHOD", help="the study method (e.g. lookahead, forgotten)")
    p.add_argument("--model", required=True, help="a checkpoint path or a shipped network's name")
    p.add_argument("--sparring", default=None, help="the weaker network the look-ahead puzzle set is built with")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--csv", default=None, help="a Lichess puzzle CSV")
    source.add_argument("--puzzles", default=None, help="a shipped puzzle set by name (lichess_puzzles_1000)")
    source.add_argument("--pgn", default=None, help="a PGN file: every position of its games")
    source.add_argument("--fens", default=None, help="a file with one FEN a line")
    p.add_argument("--limit", type=int, default=None, help="only the first N positions of the set")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a method setting (a number or a word), repeatable")
    p.add_argument("--method", action="append", default=[], metavar="EXTRA",
                   help="another registered method to run on the same study (e.g. probe), repeatable")
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's own)")
    p.add_argument("--device", default="cpu", help="cpu or cuda")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=run_study_cmd)


def _source(args: argparse.Namespace):
    from analysis.studies import PositionSource

    for kind, path in (("csv", args.csv), ("pgn", args.pgn), ("fens", args.fens)):
        if path is not None:
            return PositionSource(kind, path=path, limit=args.limit)
    return PositionSource("puzzles", path=args.puzzles or "lichess_puzzles_1000", limit=args.limit)


def _value(text: str):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"none": None, "true": True, "false": False}.get(text.lower(), text)


def _settings(args: argparse.Namespace, method_name: str) -> dict:
    """--set pairs, plus --sparring for a method that has that setting."""
    from analysis.studies import methods

    method = methods.get(method_name)
    known = {f.name for f in dataclasses.fields(method.settings)}
    settings = {}
    for pair in args.set:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CommandError(f"--set wants KEY=VALUE, not {pair!r}")
        if key in known:
            settings[key] = _value(value)
    if args.sparring is not None and "sparring" in known:
        settings["sparring"] = args.sparring
    unknown = [p.partition("=")[0] for p in args.set if p.partition("=")[0] not in known]
    if unknown and method_name == args.study_method:
        raise CommandError(f"the {method_name} method has no setting {unknown[0]!r} (its settings: {', '.join(sorted(known))})")
    return settings


def run_study_cmd(args: argparse.Namespace) -> int:
    from analysis.studies import StudyInputError, StudySpec, run_study

    progress = None if args.json else (lambda k, n: print(f"\r{k}/{n}", end="", file=sys.stderr, flush=True))
    try:
        out, studies = {}, {}
        for name in [args.study_method, *[m for m in args.method if m != args.study_method]]:
            spec = StudySpec(name, args.model, _source(args), _settings(args, name), args.seed)
            result = run_study(spec, threads=args.threads, device=args.device, on_progress=progress)
            if not out:
                out = dict(result)
            else:
                studies[name] = result
            out.update({k: v for k, v in result["summary"].items() if k not in SUMMARY_SHOWN_APART})
    except StudyInputError as exc:
        raise CommandError(str(exc)) from None
    if studies:
        out["studies"] = studies
    if progress:
        print(file=sys.stderr)
    print(json.dumps(out) if args.json else _text(out))
    return 0


def _cell(value) -> str:
    if isinstance(value, dict) and "mean" in value:
        return "-" if value["mean"] is None else f"{value['mean']:.3f} ± {2 * value['se']:.3f}"
    if isinstance(value, dict) and "score" in value:
        return "-" if value["score"] is None else f"{value['score']:.3f} [{value['low']:.3f}, {value['high']:.3f}]"
    return str(value)


def _text(result: dict) -> str:
    lines = [f"{result['spec']['method']} on {result['spec']['model']} ({len(result['items'])} positions, "
             f"code {result['code_version']})"]
    for row in result["summary"]["table"]:
        lines.append("  " + "  ".join(f"{k}: {_cell(v)}" for k, v in row.items()))
    return "\n".join(lines)
