"""The decision timeline's cost: an 80-ply game's analysis with the timeline on against the same
analysis with it off, as a ratio. Target (issue 28): at most 1.1 (no more than 10% slower).

The site's default network (or ``--network``) with its default search and budget (or ``--search``)
analyses the game as a worker does (``JobRun``, model loaded, nothing cached, no engine lane, so
the network's own work is all that is timed). Off and on alternate, each first in every other
round, ``--rounds`` times each, and the ratio is taken per round (the machine is shared, and its
load comes and goes), of the wall time and of this process's CPU time (what the work itself
costs, which other processes' load does not stretch; torch runs ``SIGHTLINE_TORCH_THREADS``
threads, 1 by default). On, phase 1's batches run with the readout points hooked and each
position's points are read through the heads; off, the plain evaluation.

    .venv/bin/python bench/timeline.py [--plies 80] [--rounds 3] [--network NAME] [--search NAME]

Writes artifacts/bench/timeline.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.engine_lane import GAME, first_plies  # noqa: E402


def timed_run(tree, network, evaluator, search: str, timeline: bool) -> tuple[float, float]:
    """(wall seconds, this process's CPU seconds) of one analysis with nothing cached."""
    from webapp.jobs.jobs import create_job
    from webapp.jobs.models import PositionResult
    from webapp.jobs.live.publish import NullPublisher
    from webapp.jobs.run.runner import JobRun
    from webapp.jobs.searches import SEARCHES

    PositionResult.objects.filter(network_checksum=network.checksum).delete()  # nothing cached
    spec = SEARCHES[search]
    job = create_job(tree, network, spec.name, 1 if spec.fixed else spec.budget_default, dispatch=False,
                     engine_nodes=0)
    t0, c0 = time.perf_counter(), time.process_time()
    done = JobRun(job, evaluator, NullPublisher(), timeline=timeline).run()
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    assert done.status == "done", done.error
    return elapsed, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plies", type=int, default=80)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--network", default=None, help="a registered network's name (default: the site's default)")
    parser.add_argument("--search", default=None, help="default: the network's default search")
    parser.add_argument("--out", type=Path, default=ROOT / "artifacts" / "bench" / "timeline.json")
    args = parser.parse_args()
    var_dir = Path(tempfile.mkdtemp(prefix="sightline-bench-"))
    for name in ("DATABASE_URL", "REDIS_URL"):
        os.environ.pop(name, None)
    os.environ.update(SIGHTLINE_VAR_DIR=str(var_dir), DJANGO_SETTINGS_MODULE="webapp.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from webapp.jobs.gameinput import parse_pgn
    from webapp.jobs.jobs import create_job
    from webapp.jobs.models import PositionResult
    from webapp.jobs.run.runner import JobRun
    from webapp.networks.model_cache import models
    from webapp.networks.models import Network
    from webapp.networks.shipped import register_shipped

    call_command("migrate", interactive=False, verbosity=0)
    register_shipped()
    network = (Network.objects.get(name=args.network) if args.network else Network.objects.offered().first())
    search = args.search or network.default_search
    evaluator = models.get(network)
    tree = parse_pgn(first_plies(GAME.read_text(), args.plies))
    for on in (False, True):  # warm up both paths
        timed_run(parse_pgn("1. e4 e5 2. Nf3 Nc6 *"), network, evaluator, search, on)
    off, on, load = [], [], []
    for _ in range(args.rounds):
        load.append(round(os.getloadavg()[0], 2))
        for timeline in (False, True) if len(on) % 2 == 0 else (True, False):  # each goes first in turn
            (on if timeline else off).append(timed_run(tree, network, evaluator, search, timeline))
        print(f"round {len(on)}: off {off[-1][0]:.2f} s ({off[-1][1]:.2f} s CPU), "
              f"on {on[-1][0]:.2f} s ({on[-1][1]:.2f} s CPU)", flush=True)
    # What the timeline stored: one per position, or the reason there is none.
    PositionResult.objects.filter(network_checksum=network.checksum).delete()
    job = create_job(tree, network, search, 1, dispatch=False, engine_nodes=0)
    JobRun(job, evaluator, lambda kind, payload: None).run()
    stored = [r.data.get("timeline") for r in PositionResult.objects.filter(network_checksum=network.checksum,
                                                                            settings_key="eval")]
    ratios = [b[0] / a[0] for a, b in zip(off, on)]
    cpu_ratios = [b[1] / a[1] for a, b in zip(off, on)]
    result = {
        "network": network.name, "search": search, "positions": len(tree.nodes), "rounds": args.rounds,
        "load_1min_per_round": load, "cpus": os.cpu_count(), "torch_threads": settings.SIGHTLINE_TORCH_THREADS,
        "batch_size": settings.SIGHTLINE_BATCH_SIZE, "device": str(getattr(evaluator.inner, "device", "cpu")),
        "timelines_stored": sum(1 for t in stored if t and "readouts" in t),
        "no_timeline_why": next((t["why"] for t in stored if t and "why" in t), None),
        "off_s": [round(t, 2) for t, _ in off], "on_s": [round(t, 2) for t, _ in on],
        "off_cpu_s": [round(c, 2) for _, c in off], "on_cpu_s": [round(c, 2) for _, c in on],
        "ratio_on_over_off": round(statistics.median(ratios), 3), "ratio_rounds": [round(r, 3) for r in ratios],
        "cpu_ratio_on_over_off": round(statistics.median(cpu_ratios), 3),
        "cpu_ratio_rounds": [round(r, 3) for r in cpu_ratios], "target": 1.1,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))
    print(f"timeline on / off: {result['ratio_on_over_off']}x wall, {result['cpu_ratio_on_over_off']}x CPU "
          f"({network.name}, {search} search, {result['positions']} positions, median of {args.rounds} rounds)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
