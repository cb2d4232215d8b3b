"""Run shell-free commands a few at a time (one torch thread each): the trainings, then the measurements."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence


@dataclass(frozen=True)
class Job:
    label: str
    argv: tuple[str, ...]  # after ``python -m analysis``
    stdout: Path | None = None  # the command's output goes here (written whole, only on success)
    ok_codes: tuple[int, ...] = (0,)  # value-sanity exits 1 when a check fails: still a measurement


def analysis_argv(argv: Sequence[str]) -> list[str]:
    return [sys.executable, "-m", "analysis", *argv]


def run_jobs(jobs: Sequence[Job], parallel: int, threads: int, log: Callable[[str], None] = print) -> list[str]:
    """Run ``jobs`` with at most ``parallel`` at once; returns the labels of the ones that failed."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}

    def one(job: Job) -> str | None:
        started = time.time()
        log(f"start  {job.label}: python -m analysis {' '.join(job.argv)}")
        proc = subprocess.run(analysis_argv(job.argv), env=env, capture_output=True, text=True)
        took = f"{(time.time() - started) / 60:.1f} min"
        if proc.returncode not in job.ok_codes:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            log(f"FAILED {job.label} (exit {proc.returncode}, {took}): {' | '.join(tail)}")
            return job.label
        if job.stdout is not None:
            job.stdout.parent.mkdir(parents=True, exist_ok=True)
            tmp = job.stdout.with_name(job.stdout.name + ".tmp")
            tmp.write_text(proc.stdout)
            os.replace(tmp, job.stdout)
        log(f"done   {job.label} ({took})")
        return None

    with ThreadPoolExecutor(max_workers=parallel) as pool:
        return [label for label in pool.map(one, jobs) if label is not None]
