"""Submission -> first ply published, with the engine lane on and off (issue 29: the first ply is
still on screen in under 300 ms with the model loaded when Stockfish analyses beside the network).

A warm worker's side of it, in this process: the network is loaded and has analysed a game already
(``ModelCache``, as a worker keeps it), then each trial submits an 80-ply game (``create_job``, as
the home form does, without the Celery hop) and runs it as the worker does (``JobRun``); the clock
stops when the first ply's evaluation is published (the runner's first ``plies`` message to the
job's channel group), and the job is then cancelled (the rest of it is ``bench/engine_lane.py``'s
figure). Nothing is cached between trials, and each starts once the last one's Stockfish has exited
(a cancelled lane's engine ends its search first). On and off alternate, so the shared machine's load
falls on both alike.
The Celery hop and the browser's share are ``bench/live.py``'s figure 3 (a real form submit).

    .venv/bin/python bench/first_ply.py [--trials 8] [--network NAME] [--engine-nodes N] [--plies 80]

Writes artifacts/bench/first_ply.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.engine_lane import GAME, first_plies  # noqa: E402

TARGET_MS = 300.0


class FirstPly:
    """A publisher that notes when the first ply is published (``time.perf_counter()``), then cancels
    the job as a user would, so the runner stops at its next check."""

    def __init__(self):
        self.at: float | None = None
        self.job_id = None

    def __call__(self, kind: str, payload: dict) -> None:
        if kind == "plies" and self.at is None:
            self.at = time.perf_counter()
            from webapp.jobs.models import AnalysisJob

            AnalysisJob.objects.filter(pk=self.job_id).update(status=AnalysisJob.Status.CANCELLED)


def trial(pgn_tree, network, evaluator, engine_nodes: int, search: str, budget: int) -> dict:
    """One submission: ms from ``create_job`` to the first ply published, and its two parts: the job's
    creation (the site's request: the game's positions and keys) and the run up to that message."""
    from webapp.jobs.run.engine_lane import engine_checksum
    from webapp.jobs.jobs import create_job
    from webapp.jobs.models import PositionResult
    from webapp.jobs.run.runner import JobRun

    PositionResult.objects.filter(network_checksum=network.checksum).delete()  # nothing cached
    PositionResult.objects.filter(network_checksum__startswith=engine_checksum("")).delete()
    wait_for_children()
    first = FirstPly()
    t0 = time.perf_counter()
    job = create_job(pgn_tree, network, search, budget, dispatch=False, engine_nodes=engine_nodes)
    first.job_id = job.pk
    created = time.perf_counter()
    done = JobRun(job, evaluator, first).run()
    assert first.at is not None, f"no ply was published ({done.status}: {done.error})"
    return {"first_ply_ms": round((first.at - t0) * 1000.0, 1), "create_ms": round((created - t0) * 1000.0, 1),
            "run_ms": round((first.at - created) * 1000.0, 1)}


def wait_for_children(limit_s: float = 30.0) -> None:
    """Until no child process of this one (the last trial's Stockfish) is alive, ``limit_s`` at most."""
    me, end = str(os.getpid()), time.monotonic() + limit_s
    while time.monotonic() < end:
        alive = False
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == me and fields[0] != "Z":
                alive = True
                break
        if not alive:
            return
        time.sleep(0.05)


def engine_name(nodes: int) -> str:
    from webapp.jobs.run.engine_lane import make_engine

    engine = make_engine(nodes).open()
    try:
        return engine.name
    finally:
        engine.close()


def summary(trials: list[dict]) -> dict:
    first = [t["first_ply_ms"] for t in trials]
    return {"first_ply_median_ms": round(statistics.median(first), 1), "first_ply_max_ms": max(first),
            "first_ply_ms": first,
            "create_median_ms": round(statistics.median(t["create_ms"] for t in trials), 1),
            "run_to_first_ply_median_ms": round(statistics.median(t["run_ms"] for t in trials), 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=8, help="submissions each with the lane on and off")
    parser.add_argument("--network", default=None, help="default: the site's default network")
    parser.add_argument("--engine-nodes", type=int, default=None, help="default: the site's default budget")
    parser.add_argument("--plies", type=int, default=80)
    parser.add_argument("--out", type=Path, default=ROOT / "artifacts" / "bench" / "first_ply.json")
    args = parser.parse_args()
    var_dir = Path(tempfile.mkdtemp(prefix="sightline-bench-"))
    try:
        return measure(args, var_dir)
    finally:
        shutil.rmtree(var_dir, ignore_errors=True)


def measure(args, var_dir: Path) -> int:
    for name in ("DATABASE_URL", "REDIS_URL"):
        os.environ.pop(name, None)
    os.environ.update(SIGHTLINE_VAR_DIR=str(var_dir), DJANGO_SETTINGS_MODULE="webapp.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from webapp.jobs.gameinput import parse_pgn
    from webapp.jobs.searches import SEARCHES
    from webapp.networks.model_cache import models
    from webapp.networks.models import Network
    from webapp.networks.shipped import register_shipped

    call_command("migrate", interactive=False, verbosity=0)
    register_shipped()
    offered = Network.objects.offered()
    network = offered.get(name=args.network) if args.network else offered.get(is_default=True)
    spec = SEARCHES[network.default_search]
    search, budget = spec.name, 1 if spec.fixed else spec.budget_default
    nodes = args.engine_nodes or settings.SIGHTLINE_ENGINE_NODES
    evaluator = models.get(network)  # the model is loaded before the clock runs, as in a warm worker
    warm = parse_pgn("1. e4 e5 2. Nf3 Nc6 *")
    trial(warm, network, evaluator, nodes, search, budget)  # first forward passes, Stockfish's files cached
    tree = parse_pgn(first_plies(GAME.read_text(), args.plies))
    runs: dict[str, list[dict]] = {"off": [], "on": []}
    load = []
    for _ in range(args.trials):
        load.append(round(os.getloadavg()[0], 2))
        runs["off"].append(trial(tree, network, evaluator, 0, search, budget))
        runs["on"].append(trial(tree, network, evaluator, nodes, search, budget))
    result = {
        "network": network.name, "search": search, "budget": budget, "positions": len(tree.nodes),
        "engine": engine_name(nodes), "engine_nodes": nodes, "trials": args.trials,
        "cpus": os.cpu_count(), "torch_threads": settings.SIGHTLINE_TORCH_THREADS, "load_1min": load,
        "lane_off": summary(runs["off"]), "lane_on": summary(runs["on"]), "target_ms": TARGET_MS,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))
    for lane in ("off", "on"):
        s = result[f"lane_{lane}"]
        print(f"engine lane {lane:>3}: submission -> first ply published: median {s['first_ply_median_ms']} ms, "
              f"max {s['first_ply_max_ms']} ms over {args.trials} (target < {TARGET_MS:.0f} ms); of the median: "
              f"creating the job {s['create_median_ms']} ms, running it to the first ply "
              f"{s['run_to_first_ply_median_ms']} ms")
    print(f"load average (1 min) during the trials: {min(load)}-{max(load)} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
