"""A study's network by name or path: ``weights/<name>.safetensors`` for a shipped one (or the
retired one of that name), else the checkpoint path given. Loaded on the CPU unless told."""

from __future__ import annotations

from pathlib import Path

from analysis.studies.errors import StudyInputError

WEIGHTS = Path(__file__).resolve().parents[2] / "weights"


def network_path(model: str) -> Path:
    """The checkpoint file for ``model`` (StudyInputError when there is none)."""
    for candidate in (Path(model), WEIGHTS / f"{model}.safetensors", WEIGHTS / "retired" / f"{model}.safetensors"):
        if candidate.is_file():
            return candidate
    raise StudyInputError(f"no network {model!r}: give a checkpoint path or a shipped name "
                          f"({', '.join(sorted(p.stem for p in WEIGHTS.glob('*.safetensors')))})")


def load_network(model: str, device: str | None = "cpu"):
    """(evaluator, lens adapter or None, why no adapter or None) for ``model``."""
    from analysis.checkpoint import CheckpointError, load_evaluator
    from analysis.lens import LensUnavailable, lens_for

    path = network_path(model)
    try:
        evaluator = load_evaluator(path, device=device, name=Path(model).stem if Path(model).is_file() else model)
    except (CheckpointError, ValueError) as exc:
        raise StudyInputError(f"cannot load {model}: {exc}") from None
    try:
        return evaluator, lens_for(evaluator.model, evaluator.encoding), None
    except LensUnavailable as exc:
        return evaluator, None, str(exc)
