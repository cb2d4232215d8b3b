"""Peak memory of the upload check while it refuses two Lc0 bombs (issue 31, N2).

Each case runs in a fresh process that first loads what a worker holds when it checks an
upload (Django set up, ``webapp.networks.registry`` imported, one real Lc0 net converted so
the check path is warm), then reads its idle RSS, resets the peak (``/proc/self/clear_refs``)
and runs the check's reading step (the family importer's ``convert``, which is what
``registry.check_network`` does first with an ``.pb.gz``). Printed per case: the file's size,
what it unpacks to, the refusal, seconds, idle RSS, peak RSS and the growth.

Cases: ``zeros`` (3 GiB of zeros, gzipped: about 3 MB), ``declared`` (a valid protobuf whose
one tensor holds 3 GiB of zeros, gzipped: about 3 MB), and ``maia`` (a real net, accepted:
the cost of a legitimate upload for comparison; needs /work/shared data).

    .venv/bin/python bench/upload_bombs.py [--cases zeros declared maia] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MAIA = Path(os.environ.get("SIGHTLINE_SHARED_DATA", "/work/shared/data")) / "lc0" / "maia-1100.pb.gz"
CASES = ("zeros", "declared", "maia")


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def measure(case: str, path: Path, work: Path) -> dict:
    """In this process: warm the worker's check path, then check ``path`` and report memory."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    os.environ["SIGHTLINE_VAR_DIR"] = str(work)
    import django

    django.setup()
    import webapp.networks.registry  # noqa: F401  (what the check task imports)
    from analysis.errors import CheckpointError
    from analysis.models import importer_for

    importer = importer_for(path)
    if MAIA.is_file():
        importer.convert(MAIA, work / "warm.safetensors")  # the check path, warm
    idle_kib = _status_kib("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # peak RSS := current RSS
    start = time.perf_counter()
    try:
        importer.convert(path, work / "out.safetensors")
        outcome = "accepted"
    except CheckpointError as exc:
        outcome = f"refused ({type(exc).__name__}): {exc}"
    seconds = time.perf_counter() - start
    peak_kib = _status_kib("VmHWM")
    return {"case": case, "file_mb": round(path.stat().st_size / 1e6, 1), "outcome": outcome,
            "seconds": round(seconds, 2), "idle_rss_mib": round(idle_kib / 1024), "peak_rss_mib": round(peak_kib / 1024),
            "growth_mib": round((peak_kib - idle_kib) / 1024, 1)}


def _file(case: str, work: Path) -> Path:
    from tests.lc0_bombs import declared_tensor_bomb, zeros_bomb

    if case == "maia":
        return MAIA
    path = work / f"{case}.pb.gz"
    path.write_bytes(zeros_bomb() if case == "zeros" else declared_tensor_bomb())
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--measure", nargs=3, metavar=("CASE", "FILE", "WORK"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        case, path, work = args.measure
        print(json.dumps(measure(case, Path(path), Path(work))))
        return 0
    rows = []
    for case in args.cases:
        if case == "maia" and not MAIA.is_file():
            print(f"maia: {MAIA} is missing, skipped", file=sys.stderr)
            continue
        with tempfile.TemporaryDirectory(prefix="sightline-bombs-") as tmp:
            path = _file(case, Path(tmp))
            run = subprocess.run([sys.executable, __file__, "--measure", case, str(path), tmp], cwd=ROOT,
                                 capture_output=True, text=True, timeout=600)
            if run.returncode:
                print(run.stderr, file=sys.stderr)
                return run.returncode
            rows.append(json.loads(run.stdout.strip().splitlines()[-1]))
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        print(f"{row['case']:>8}: {row['file_mb']} MB file, {row['seconds']} s, idle RSS {row['idle_rss_mib']} MiB, "
              f"peak {row['peak_rss_mib']} MiB, growth {row['growth_mib']} MiB; {row['outcome']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
