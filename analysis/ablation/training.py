"""Train an ablation's variants (resuming any run left in runs/<name>) and keep each export and its
loss history in the ablation's store, so the table and cards outlive the run directories."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.compute as pc

from analysis.ablation.config import AblationConfig, Variant
from analysis.ablation.jobs import Job
from analysis.ablation.measure import export_path, history_path
from analysis.data.store import read_annotated
from analysis.train.loop import HISTORY_FILE


def stored(cfg: AblationConfig, variant: Variant) -> bool:
    return export_path(cfg, variant).exists() and history_path(cfg, variant).exists()


def train_jobs(cfg: AblationConfig, cap_minutes: float | None = None) -> list[Job]:
    """A ``train`` command for every variant whose export is not stored yet and not finished in its run
    directory (the trainer resumes from runs/<name>/state.pt). ``cap_minutes`` shortens any run whose own
    time limit is longer (a lent machine's lease): the run exports what it reached, and the table shows it."""
    jobs = []
    for v in cfg.variants:
        if stored(cfg, v) or v.train.export_path.exists():
            continue
        argv = ["train", "--config", str(v.config), "--quiet"]
        own = v.train.max_wall_minutes
        if cap_minutes is not None and (own is None or cap_minutes < own):
            argv += ["--max-wall-minutes", f"{cap_minutes:g}"]
        jobs.append(Job(f"train {cfg.name}/{v.name}", tuple(argv)))
    return jobs


def keep(cfg: AblationConfig, variant: Variant) -> bool:
    """Copy a finished run's export and loss history into the store; False while it is unfinished."""
    train = variant.train
    history = train.out / HISTORY_FILE
    if stored(cfg, variant):
        return True
    if not (train.export_path.exists() and history.exists()):
        return False
    cfg.store.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(history, history_path(cfg, variant))
    shutil.copyfile(train.export_path, export_path(cfg, variant))
    return True


def position_coverage(roots: list[Path]) -> dict[str, int]:
    """Training rows, those with action values (the rows an action-value net samples its moves from) and
    those with a value for every legal move."""
    rows = valued = complete = 0
    for root in roots:
        table = read_annotated(root, columns=["action_indices", "legal_indices"], split="train")
        rows += table.num_rows
        moves = pc.list_value_length(table["action_indices"]).fill_null(0)
        valued += int(pc.sum(pc.greater(moves, 0)).as_py() or 0)
        complete += int(pc.sum(pc.equal(moves, pc.list_value_length(table["legal_indices"]))).as_py() or 0)
    return {"train_positions": rows, "with_action_values": valued, "every_move_annotated": complete}


def check_same_positions(cfg: AblationConfig) -> dict[str, int]:
    """Every variant reads the same datasets, and each row of them carries every legal move's value, so an
    action-value net trains on the very positions a state-value or cloning net does."""
    datasets = {tuple(map(str, v.train.datasets)) for v in cfg.variants}
    if len(datasets) != 1:
        raise ValueError(f"{cfg.name}: the variants read different datasets: {sorted(datasets)}")
    coverage = position_coverage(list(cfg.variants[0].train.datasets))
    missing = coverage["train_positions"] - coverage["with_action_values"]
    if missing:
        raise ValueError(f"{cfg.name}: {missing} of {coverage['train_positions']} training positions have no action "
                         "values: annotate the dataset with --multipv-share 1.0, or the action-value net would "
                         "train on fewer positions than the others")
    return coverage
