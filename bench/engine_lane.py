"""The engine lane's cost: an 80-ply game's full analysis with the engine lane on (Stockfish beside the
network, the default budget) against the same analysis with it off, as a ratio. Target (issue 29):
at most 1.5x.

The site's default network with its default search and budget analyses the game as a worker does
(``JobRun``, model loaded, nothing cached); on and off alternate, ``--rounds`` times each, and the
ratio is taken per round (the machine is shared, and its load comes and goes). Stockfish runs on
its own thread and process (one thread, as the lane runs it) while the network works.

    .venv/bin/python bench/engine_lane.py [--plies 80] [--rounds 2] [--engine-nodes N]

Writes artifacts/bench/engine_lane.json.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GAME = ROOT / "bench" / "games" / "kasparov-topalov-1999.pgn"


def first_plies(pgn: str, plies: int) -> str:
    import chess.pgn

    game = chess.pgn.read_game(io.StringIO(pgn))
    node = game
    for _ in range(plies):
        node = node.variations[0]
    node.variations.clear()
    return game.accept(chess.pgn.StringExporter(headers=True, variations=False, comments=False))


def timed_run(tree, network, evaluator, engine_nodes: int) -> tuple[float, object]:
    from webapp.jobs.run.engine_lane import engine_checksum
    from webapp.jobs.jobs import create_job
    from webapp.jobs.models import PositionResult
    from webapp.jobs.live.publish import NullPublisher
    from webapp.jobs.run.runner import JobRun
    from webapp.jobs.searches import SEARCHES

    PositionResult.objects.filter(network_checksum=network.checksum).delete()  # nothing cached
    PositionResult.objects.filter(network_checksum__startswith=engine_checksum("")).delete()
    spec = SEARCHES[network.default_search]
    job = create_job(tree, network, spec.name, 1 if spec.fixed else spec.budget_default, dispatch=False,
                     engine_nodes=engine_nodes)
    t0 = time.perf_counter()
    done = JobRun(job, evaluator, NullPublisher()).run()
    elapsed = time.perf_counter() - t0
    assert done.status == "done", done.error
    return elapsed, done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plies", type=int, default=80)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--engine-nodes", type=int, default=None, help="default: the site's default budget")
    parser.add_argument("--out", type=Path, default=ROOT / "artifacts" / "bench" / "engine_lane.json")
    args = parser.parse_args()
    var_dir = Path(tempfile.mkdtemp(prefix="sightline-bench-"))
    for name in ("DATABASE_URL", "REDIS_URL"):
        os.environ.pop(name, None)
    os.environ.update(SIGHTLINE_VAR_DIR=str(var_dir), DJANGO_SETTINGS_MODULE="webapp.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from webapp.jobs.gameinput import parse_pgn
    from webapp.networks.model_cache import models
    from webapp.networks.models import Network
    from webapp.networks.shipped import register_shipped

    call_command("migrate", interactive=False, verbosity=0)
    register_shipped()
    network = Network.objects.offered().first()
    evaluator = models.get(network)
    nodes = args.engine_nodes or settings.SIGHTLINE_ENGINE_NODES
    tree = parse_pgn(first_plies(GAME.read_text(), args.plies))
    timed_run(parse_pgn("1. e4 e5 2. Nf3 Nc6 *"), network, evaluator, nodes)  # warm up both sides
    off, on, load, notes = [], [], [], []
    for _ in range(args.rounds):
        load.append(round(os.getloadavg()[0], 2))
        off.append(timed_run(tree, network, evaluator, 0)[0])
        elapsed, job = timed_run(tree, network, evaluator, nodes)
        on.append(elapsed)
        notes.append(job.engine_note)
    ratios = [b / a for a, b in zip(off, on)]
    result = {
        "network": network.name, "search": network.default_search, "positions": len(tree.nodes),
        "engine": job.engine_name, "engine_nodes": nodes, "rounds": args.rounds, "load_1min_per_round": load,
        "cpus": os.cpu_count(), "torch_threads": settings.SIGHTLINE_TORCH_THREADS,
        "off_s": [round(t, 2) for t in off], "on_s": [round(t, 2) for t in on],
        "ratio_on_over_off": round(statistics.median(ratios), 2), "ratio_rounds": [round(r, 2) for r in ratios],
        "target": 1.5, "engine_notes": [n for n in notes if n],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
