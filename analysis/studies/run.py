"""``run_study``: a method over a position set, item by item, resumable and deterministic.

Each item is measured on its own (its randomness from (seed, item.index)), so a run stopped after k
items and resumed with ``done=`` gives the same JSON as one run straight through: the worker stores
each ``on_item`` result, and a new worker passes them back as ``done``.
"""

from __future__ import annotations

import functools
import importlib
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Mapping

import torch

from analysis.studies import methods
from analysis.studies.errors import StudyInputError, StudyStopped
from analysis.studies.methods import StudyContext
from analysis.studies.networks import load_network
from analysis.studies.positions import Item, miner_for, read_positions
from analysis.studies.spec import StudySpec, parse_settings

# The "games" kind's miner registers at import: loaded here, so any method may read mined positions.
importlib.import_module("analysis.studies.mining")

# The version a study records where the checkout has no git (a wheel, a copied tree).
VERSION = "0.38"


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """``git describe --always --dirty`` of the checkout holding this package, else VERSION
    (computed once a process: two runs in one checkout record the same)."""
    root = Path(__file__).resolve().parents[2]
    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=root, capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return VERSION
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else VERSION


@contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """torch's intra-op threads set to ``threads`` for the block (None leaves them)."""
    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(max(1, int(threads)))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def open_study(spec: StudySpec, threads: int | None = None, device: str | None = "cpu"
               ) -> tuple[methods.StudyMethod, StudyContext]:
    """The method and its context (settings parsed, network loaded; StudyInputError when the method
    does not apply to it). ``prepare`` is not called yet."""
    method = methods.get(spec.method)
    settings = parse_settings(method.settings, spec.settings, method.name)
    if isinstance(spec.seed, bool) or not isinstance(spec.seed, int):
        raise StudyInputError(f"the seed must be a whole number, not {spec.seed!r}")
    evaluator, adapter, why = load_network(spec.model, device=device)
    if adapter is None:
        raise StudyInputError(f"the {method.name} method needs the lens: {why}")
    why = method.why_not(adapter)
    if why is not None:
        raise StudyInputError(f"the {method.name} method does not apply to {spec.model}: {why}")
    return method, StudyContext(spec, settings, evaluator, adapter, threads)


def study_items(spec: StudySpec, context: StudyContext) -> list[Item]:
    """The spec's positions (a mined kind through its registered miner and the study's network)."""
    miner = miner_for(spec.positions.kind)
    if spec.positions.kind == "games":
        if miner is None:
            raise StudyInputError("no miner for positions from games is installed here")
        items = miner(spec.positions, context)
        if not items:
            raise StudyInputError("no position mined from the games fits")
        return items
    return read_positions(spec.positions)


def run_study(spec: StudySpec, *, done: Mapping[int, dict] = {}, on_item: Callable[[int, dict], None] | None = None,
              on_progress: Callable[[int, int], None] | None = None, should_stop: Callable[[], bool] | None = None,
              threads: int | None = None, device: str | None = "cpu") -> dict:
    """{"spec", "code_version", "items" (per item, index order), "summary"}; StudyStopped when
    ``should_stop()`` is true between items (the new items so far went to ``on_item``)."""
    with torch_threads(threads):
        method, context = open_study(spec, threads, device)
        items = study_items(spec, context)
        results = {int(i): dict(r) for i, r in done.items() if 0 <= int(i) < len(items)}  # JSON keys may be text
        if on_progress:
            on_progress(len(results), len(items))
        if len(results) < len(items):
            method.prepare(context)
            try:
                for item in items:
                    if item.index in results:
                        continue
                    if should_stop is not None and should_stop():
                        raise StudyStopped(f"stopped after {len(results)} of {len(items)} items")
                    result = {"index": item.index, "id": item.id, "fen": item.fen, **method.measure(context, item)}
                    results[item.index] = result
                    if on_item:
                        on_item(item.index, result)
                    if on_progress:
                        on_progress(len(results), len(items))
            finally:
                method.close(context)
        ordered = [results[i] for i in range(len(items))]
        return {"spec": spec.to_json(), "code_version": code_version(), "items": ordered,
                "summary": method.summarise(context, ordered)}
