"""``probe``: concept probes at every readout point of a network, beside an untrained copy and the
input planes (issue 39; docs/probes.md).

JSON contract (``--json``): one object with ``network``, ``points`` (readout names in forward order)
and ``concepts``: {name: {"kind", "metric" (auroc or r2), "balance" (a binary concept's test-set
positive share; null otherwise), "size", "trained": [{"score", "low", "high"} per point, null where
the concept cannot be read], "untrained": [...], "input": {...}, "best_point", "selectivity"}} (a
square concept's score is its mean AUROC over squares). ``--erase`` adds per concept ``erasure`` =
{"directions", "probe_after", "policy_kl", "random_kl_median", ...}. ``--models A,B,C
--knowing-doing`` prints {"networks", "knowing", "doing", "reading"} instead.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from analysis.cli import CommandError

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CONCEPTS = "piece_on_square,material,in_check,own_en_prise,opp_en_prise,mobility,mate_in_one,mate_threat"


def register(subparsers) -> None:
    p = subparsers.add_parser("probe", help="concept probes at every readout point, with untrained and input controls")
    p.add_argument("--model", default=None, help="a checkpoint path or a shipped network's name (maia-1900, cf-shaw)")
    p.add_argument("--models", default=None, help="several networks, comma-separated (with --knowing-doing)")
    p.add_argument("--concepts", default=DEFAULT_CONCEPTS, help=f"comma-separated (default {DEFAULT_CONCEPTS})")
    p.add_argument("--positions", type=int, default=2000, help="positions per concept, train + val + test (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="the pool's order, the split, the untrained copy, the draws")
    p.add_argument("--fens", type=Path, default=None, help="add a file of FENs (one a line) or a PGN to the pool")
    p.add_argument("--data", type=Path, default=None, help="reference data with pgn/ and puzzles/ (default ../shared/data)")
    p.add_argument("--penalty", choices=("l1", "l2"), default="l2")
    p.add_argument("--erase", action="store_true", help="erase each concept at its best point (LEACE) and measure "
                   "the policy against random directions")
    p.add_argument("--knowing-doing", action="store_true", help="best AUROC per net beside its doing rate")
    p.add_argument("--list", action="store_true", help="list the concepts and exit")
    p.add_argument("--device", default="cpu", help="cpu or cuda (default cpu)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=run_probe)


def resolve_model(name: str) -> Path:
    """A path as given, else ``weights/**/NAME.safetensors`` (shipped, retired or an ablation's)."""
    path = Path(name)
    if path.is_file():
        return path
    found = sorted((ROOT / "weights").rglob(f"{name}.safetensors"))
    if not found:
        raise CommandError(f"unknown model {name!r}: give a checkpoint file or a network under weights/ "
                           "(e.g. maia-1900, cf-shaw)")
    return found[0]


def _concepts(text: str):
    from analysis.probes.concepts import get_concept

    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise CommandError("--concepts names no concept")
    try:
        return [get_concept(n) for n in dict.fromkeys(names)]
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def _data(args, concepts):
    from analysis.engines.stockfish import find_stockfish, open_stockfish
    from analysis.probes.positions import PositionConfig, build

    config = PositionConfig(positions=args.positions, seed=args.seed, extra=args.fens,
                            **({"data": args.data} if args.data is not None else {}))
    engine = None
    if any(c.engine for c in concepts):
        path = find_stockfish()
        if path is None:
            raise CommandError("the engine concepts (sf_score, best_move_*) need Stockfish, which is not installed")
        engine = open_stockfish(path, show_wdl=False)
    try:
        return build(concepts, config, engine=engine)
    except (ValueError, OSError) as exc:
        raise CommandError(str(exc)) from None
    finally:
        if engine is not None:
            engine.quit()


def _load(name: str, device: str):
    from analysis.checkpoint import CheckpointError, load_evaluator
    from analysis.lens import LensUnavailable, lens_for

    try:
        evaluator = load_evaluator(resolve_model(name), device=device)
        return evaluator, lens_for(evaluator.model, evaluator.encoding)
    except (CheckpointError, LensUnavailable) as exc:
        raise CommandError(str(exc)) from None


def run_probe(args: argparse.Namespace) -> int:
    import torch

    from analysis.probes.concepts import CONCEPTS

    if args.list:
        for c in CONCEPTS.values():
            print(f"{c.name:18} {c.kind:10} {c.about}")
        return 0
    if args.knowing_doing != bool(args.models):
        raise CommandError("--knowing-doing goes with --models A,B,... (and --models with --knowing-doing)")
    if not args.models and not args.model:
        raise CommandError("give --model (or --models with --knowing-doing)")
    torch.set_num_threads(1)
    concepts = _concepts(args.concepts)
    names = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else [args.model]
    loaded = [_load(n, args.device) for n in names]  # unknown models fail before any work
    say = (lambda text: None) if args.json else (lambda text: print(text, file=sys.stderr, flush=True))
    say("labelling positions")
    data = _data(args, concepts)
    out = _knowing_doing(names, loaded, data, args, say) if args.knowing_doing else _one(names[0], *loaded[0], data, args, say)
    print(json.dumps(out) if args.json else _text(out))
    return 0


def _one(name, evaluator, adapter, data, args, say):
    from analysis.lens import lens_for
    from analysis.probes.activations import untrained_copy
    from analysis.probes.erasure import EraseConfig
    from analysis.probes.fit import FitConfig
    from analysis.probes.run import RunConfig, erase_all, probe_network

    config = RunConfig(fit=FitConfig(penalty=args.penalty, seed=args.seed))
    untrained = lens_for(untrained_copy(evaluator.model, args.seed), evaluator.encoding)
    result, _, acts = probe_network(adapter, untrained, data, config, args.seed, say, keep=args.erase)
    if args.erase:
        erase_all(adapter, data, result, acts, config, EraseConfig(seed=args.seed), args.seed, say)
    return {"network": name, "seed": args.seed, "positions": args.positions, **result}


def _knowing_doing(names, loaded, data, args, say):
    from analysis.probes.activations import collect
    from analysis.probes.doing import doing_rates, knowing, reading
    from analysis.probes.fit import FitConfig
    from threadpoolctl import threadpool_limits

    from analysis.probes.run import RunConfig, best_point, concept_entry, probe_input, probe_points

    config = RunConfig(fit=FitConfig(penalty=args.penalty, seed=args.seed))
    control = probe_input(data, config)
    know, do = {}, {}
    for name, (evaluator, adapter) in zip(names, loaded):
        say(f"probing {name}")
        with threadpool_limits(config.threads):
            probes = probe_points(collect(adapter, data.boards, config.batch), data, config, args.seed)
        points = list(adapter.readouts)
        result = {"points": points, "concepts": {n: concept_entry(data.sets[n], points, p, p, control[n])
                                                 for n, p in probes.items() if best_point(p) is not None}}
        know[name], do[name] = knowing(result), doing_rates(evaluator, data)
    return {"networks": names, "seed": args.seed, "positions": args.positions, "knowing": know, "doing": do,
            "reading": reading(names, know, do)}


def _text(out) -> str:
    if "knowing" in out:
        lines = [f"knowing (best point's score) and doing (rate of acting) per net, seed {out['seed']}"]
        for net in out["networks"]:
            for c, k in out["knowing"][net].items():
                lines.append(f"  {net:12} know {c:16} {k['score']:.3f} [{k['low']:.3f}, {k['high']:.3f}] at {k['point']}")
            for c, d in out["doing"][net].items():
                if d["rate"] is not None:
                    lines.append(f"  {net:12} do   {c:16} {d['rate']:.3f} [{d['low']:.3f}, {d['high']:.3f}] "
                                 f"over {d['positions']}")
        return "\n".join(lines + ["reading:"] + [f"  {r}" for r in out["reading"]])
    lines = [f"{out['network']}: points {', '.join(out['points'])}"]
    for name, c in out["concepts"].items():
        best = c["best_point"]
        if best is None:
            lines.append(f"  {name:16} {c['why']}")
            continue
        t = c["trained"][out["points"].index(best)]
        s = c["selectivity"]["untrained"]
        bal = "" if c["balance"] is None else f" balance {c['balance']:.2f}"
        lines.append(f"  {name:16} {c['metric']} {t['score']:.3f} [{t['low']:.3f}, {t['high']:.3f}] at {best}; "
                     f"selectivity vs untrained {s['score']:+.3f} [{s['low']:+.3f}, {s['high']:+.3f}]; "
                     f"input {c['input']['score']:.3f}{bal}")
        if "erasure" in c:
            e = c["erasure"]
            lines.append("      erasure: " + (e["why"] if "why" in e else
                         f"{e['directions']} direction(s), probe after {e['probe_after']['score']:.3f}, policy KL "
                         f"{e['policy_kl']:.4f} vs random {e['random_kl_median']:.4f}"))
    return "\n".join(lines)
