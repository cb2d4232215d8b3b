"""``elo``: one rating list from several ``match --json`` results (AlphaGateau's weighted fit)."""

from __future__ import annotations

import json
from pathlib import Path

from analysis.cli import CommandError


def _pair(path: Path):
    from analysis.eval.elo import PairResult

    try:
        s = json.loads(path.read_text())
        return PairResult(s["a"], s["b"], int(s["wins"]), int(s["draws"]), int(s["losses"]))
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError):
        raise CommandError(f"{path} is not a `match --json` result (a, b, wins, draws, losses)") from None


def _anchor(text: str | None) -> tuple[str | None, float]:
    if text is None:
        return None, 0.0
    name, _, rating = text.rpartition("=")
    try:
        return name, float(rating)
    except ValueError:
        raise CommandError(f"--anchor takes NAME=RATING, e.g. stockfish-1350=1350, not {text!r}") from None


def _elo(args) -> int:
    from analysis.eval.elo import fit_elo

    anchor, rating = _anchor(args.anchor)
    pairs = [_pair(Path(p)) for p in args.results]
    try:
        fit = fit_elo(pairs, anchor=anchor, anchor_rating=rating)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    players = sorted(fit.ratings, key=lambda p: -fit.ratings[p])
    rows = [{"player": p, "rating": round(fit.ratings[p], 1), "ci95": [round(x, 1) for x in fit.interval(p)]}
            for p in players]
    if args.json:
        print(json.dumps({"anchor": anchor, "anchor_rating": rating if anchor else None, "ratings": rows,
                          "pairs": [vars(p) for p in pairs]}, indent=2))
    else:
        for row in rows:
            low, high = row["ci95"]
            print(f"{row['player']:>40}  {row['rating']:7.1f}  [{low:.0f}, {high:.0f}]")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("elo", help="fit one Elo list to several `match --json` results (95%% intervals)")
    p.add_argument("results", nargs="+", help="match --json output files")
    p.add_argument("--anchor", help="NAME=RATING: fix this player's rating (default: the mean is 1000)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_elo)
