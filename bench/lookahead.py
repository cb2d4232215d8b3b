"""The look-ahead study's speed on this machine: the whole pipeline (puzzle filters, corruption
search, residual patching at every readout point) over a puzzle CSV, one run.

    python bench/lookahead.py                                  # maia-1900, sparring cf-small, 1,000 puzzles, 2 threads
    python bench/lookahead.py --limit 200 --threads 1
    python bench/lookahead.py --model cf-shaw

Sparring net: cf-small (a Chessformer: another family than Maia, so "hard for the sparring net" is
not "hard for a Maia"; the anchors' note: maia-1100 is too correlated with maia-1900; cf-small solves
117 of the 1,000 puzzles by its policy alone against maia-1900's 363).

Figures: puzzles scanned per second; seconds per analysed puzzle (its filters, corruption search and
patching); the time the run would take to keep 150 puzzles at this run's yield (total time x 150 /
kept), against issue 38's target of 15 minutes on two cores.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.studies import PositionSource, StudySpec, run_study  # noqa: E402
from analysis.studies.positions import SHARED_DATA  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="maia-1900")
    parser.add_argument("--sparring", default="cf-small")
    parser.add_argument("--csv", default=str(SHARED_DATA / "puzzles" / "lichess_puzzles_1000.csv"))
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    spec = StudySpec("lookahead", args.model, PositionSource("csv", path=args.csv, limit=args.limit),
                     {"sparring": args.sparring})
    times: dict[int, float] = {}
    last = [time.perf_counter()]

    def on_item(index: int, result: dict) -> None:
        now = time.perf_counter()
        times[index], last[0] = now - last[0], now

    start = time.perf_counter()
    result = run_study(spec, threads=args.threads, on_item=on_item)
    total = time.perf_counter() - start
    puzzles = result["summary"]["puzzles"]
    analysed = [r["index"] for r in result["items"] if r.get("analysed")]
    print(f"{args.model} (sparring {args.sparring}), {len(result['items'])} puzzles, {args.threads} threads: "
          f"{total:.1f} s, {len(result['items']) / total:.2f} puzzles/s")
    print(f"eligible {puzzles['eligible']}, kept {puzzles['kept']}, analysed {puzzles['analysed']}; "
          f"dropped {puzzles['dropped']}")
    if analysed:
        per = sum(times[i] for i in analysed) / len(analysed)
        print(f"seconds per analysed puzzle (filters, corruptions, patching): {per:.2f}")
    if puzzles["kept"]:
        print(f"projected time to keep 150 puzzles at this yield: {total * 150 / puzzles['kept'] / 60:.1f} min "
              f"(target: 15 min on two cores)")


if __name__ == "__main__":
    main()
