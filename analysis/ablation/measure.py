"""The shipped cards' measuring commands for one variant, each kept as the JSON it prints.

A measurement already on file is not run again (rerunning an ablation resumes it)."""

from __future__ import annotations

import json
from pathlib import Path

from analysis.ablation.config import MATCH_GAMES, MATCH_MAX_PLIES, MATCH_OPPONENT, AblationConfig, Variant
from analysis.ablation.jobs import Job
from analysis.models import get_family


def export_path(cfg: AblationConfig, variant: Variant) -> Path:
    return cfg.store / f"{variant.name}.safetensors"


def history_path(cfg: AblationConfig, variant: Variant) -> Path:
    return cfg.store / f"{variant.name}.history.json"


def results_dir(cfg: AblationConfig, variant: Variant) -> Path:
    return cfg.store / variant.name


def has_value(variant: Variant) -> bool:
    """Whether the variant's network predicts a value (a behavioural-cloning net does not)."""
    train = variant.train
    family = get_family(train.family)
    return family.capabilities(family.preset(train.model, **train.model_overrides)).value


def measure_argv(cfg: AblationConfig, variant: Variant, measure: str) -> list[str] | None:
    """``python -m analysis`` arguments of one measurement; None where it does not apply."""
    model, algo, threads = str(export_path(cfg, variant)), variant.algo, str(cfg.threads)
    limit = [] if cfg.limit is None else ["--limit", str(cfg.limit)]
    if measure == "puzzles":
        return ["puzzles", "--model", model, "--algo", algo, "--csv", str(cfg.puzzles), "--threads", threads, *limit, "--json"]
    if measure == "sts":
        return ["sts", "--model", model, "--algo", algo, "--epd", str(cfg.sts), "--threads", threads, *limit, "--json"]
    if measure == "metrics":
        return ["metrics", "--model", model, "--algo", algo, "--data", str(cfg.data), "--threads", threads, *limit, "--json"]
    if measure in ("value_quality", "value_sanity") and not has_value(variant):
        return None
    if measure == "value_quality":
        return ["value-quality", "--model", model, "--data", str(cfg.data), "--threads", threads, *limit, "--json"]
    if measure == "value_sanity":
        return ["value-sanity", "--model", model, "--threads", threads, "--json"]
    if measure == "heads":
        return ["heads", "--model", model, "--positions", str(cfg.heads_positions), "--causal", "--json"]
    if measure == "match":
        return ["match", "--a", f"{model}:{algo}", "--b", MATCH_OPPONENT, "--games", str(cfg.limit or MATCH_GAMES),
                "--max-plies", str(MATCH_MAX_PLIES), "--openings", str(cfg.openings), "--json"]
    raise ValueError(f"unknown measure {measure!r}")


def measure_jobs(cfg: AblationConfig, variant: Variant) -> list[Job]:
    """The variant's measurements not yet on file."""
    jobs = []
    for measure in cfg.measures:
        argv = measure_argv(cfg, variant, measure)
        out = results_dir(cfg, variant) / f"{measure}.json"
        if argv is not None and not out.exists():
            jobs.append(Job(f"{cfg.name}/{variant.name} {measure}", tuple(argv), out,
                            ok_codes=(0, 1) if measure == "value_sanity" else (0,)))
    return jobs


def load_results(cfg: AblationConfig, variant: Variant) -> dict[str, dict]:
    """The measurements on file for ``variant``, by measure name."""
    found = {}
    for measure in cfg.measures:
        path = results_dir(cfg, variant) / f"{measure}.json"
        if path.exists():
            found[measure] = json.loads(path.read_text())
    return found


def metric_names(variant: Variant) -> dict[str, str]:
    """Measure -> the name ``attach-metrics`` stores it under (the shipped cards' names)."""
    return {"puzzles": f"puzzles_{variant.algo}", "sts": f"sts_{variant.algo}", "metrics": f"metrics_{variant.algo}",
            "value_quality": "value_quality", "value_sanity": "value_sanity", "heads": "head_atlas",
            "match": f"match_{variant.algo}_vs_sf1350"}
