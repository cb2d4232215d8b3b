"""``ablation run``: train every variant (resuming), keep its export, measure it, then cards and tables."""

from __future__ import annotations

import json
from typing import Callable, Sequence

from analysis.ablation.config import AblationConfig
from analysis.ablation.jobs import run_jobs
from analysis.ablation.measure import export_path, load_results, measure_jobs, metric_names
from analysis.ablation.report import coverage_path, write_card, write_section
from analysis.ablation.summary import summarise
from analysis.ablation.training import check_same_positions, keep, train_jobs
from analysis.eval.report import attach_metrics


def run_ablations(ablations: Sequence[tuple[AblationConfig, str]], *, train: bool = True, measure: bool = True,
                  parallel: int | None = None, cap_minutes: float | None = None,
                  log: Callable[[str], None] = print) -> list[str]:
    """Everything still to do for every (ablation, its file): the trainings of all of them in one pool
    (so a core freed by one ablation's short runs takes the other's), then all measurements, then each
    ablation's cards and table. Returns what is left unfinished (empty when all are done).

    A lent GPU machine trains every variant at once (``parallel``) within its lease (``cap_minutes``) and
    stops there (``measure=False``); a rerun with ``train=False`` measures the kept exports elsewhere."""
    for cfg, path in ablations:
        for data in _datasets_needed(cfg, train, measure):
            if not data.exists():
                raise ValueError(f"{cfg.name}: dataset {data} not found: build it first ({path}'s header gives "
                                 "the commands)")
        if cfg.same_positions and train:
            coverage = check_same_positions(cfg)
            cfg.store.mkdir(parents=True, exist_ok=True)
            coverage_path(cfg).write_text(json.dumps(coverage, indent=2) + "\n")
    parallel = parallel or max(c.parallel for c, _ in ablations)
    threads = max(c.threads for c, _ in ablations)
    failed = run_jobs([j for c, _ in ablations for j in train_jobs(c, cap_minutes)], parallel, threads, log) if train else []
    trained = [(c, v) for c, _ in ablations for v in c.variants if keep(c, v)]
    unfinished = [f"train {c.name}/{v.name}" for c, _ in ablations for v in c.variants if (c, v) not in trained]
    if not measure:
        return sorted(set(unfinished + failed))
    failed += run_jobs([job for c, v in trained for job in measure_jobs(c, v)], parallel, threads, log)
    for cfg, path in ablations:
        for v in cfg.variants:
            if (cfg, v) in trained:
                names = metric_names(v)
                attach_metrics(export_path(cfg, v), {names[m]: r for m, r in load_results(cfg, v).items()})
                write_card(cfg, summarise(cfg, v), path)
        write_section(cfg, path)
    return sorted(set(unfinished + failed))


def _datasets_needed(cfg: AblationConfig, train: bool, measure: bool) -> set:
    """The datasets this run reads: every variant's for training; the test split's for a measurement still
    to make on it (a rerun that only adds the match, say, needs none)."""
    needed = {cfg.data, *(d for v in cfg.variants for d in v.train.datasets)} if train else set()
    if measure and any(str(cfg.data) in job.argv for v in cfg.variants if keep(cfg, v) for job in measure_jobs(cfg, v)):
        needed.add(cfg.data)
    return needed
