"""Checkpoints as networks: build the network a checkpoint file describes, and save one.

The file itself (a ``.safetensors`` file, metadata in its header, nothing pickled) is
``analysis.checkpoint_file``; its names are re-exported here for the callers that load.
Loading reads and checks the header and every tensor's name, dtype and shape before
it touches tensor data; any problem is one ``CheckpointError`` whose message names it.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file

from analysis.checkpoint_file import (DTYPES, CheckpointMeta, file_sha256, read_header, rewrite_metadata,
                                      write_atomically)
from analysis.errors import CheckpointError
from analysis.models import get_family, importer_for

__all__ = ["CheckpointError", "CheckpointMeta", "describe_file", "file_sha256", "load_checkpoint", "load_evaluator", "network_name",
           "read_header", "rewrite_metadata", "save_checkpoint", "write_atomically"]


def save_checkpoint(path: str | Path, model: torch.nn.Module, *, trained: bool,
                    provenance: dict[str, Any] | None = None, metrics: dict[str, Any] | None = None) -> Path:
    """Write ``model`` with its metadata; the file appears whole or not at all."""
    family = get_family(model.family)
    meta = CheckpointMeta(family=family.name, config=asdict(model.config), input_encoding=family.encoding_of(model.config),
                          trained=trained, provenance=provenance or {}, metrics=metrics or {})
    tensors = {name: t.detach().to("cpu").contiguous() for name, t in model.state_dict().items()}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_atomically(path, tensors, meta)


def load_checkpoint(path: str | Path, *, family: str | None = None) -> tuple[torch.nn.Module, CheckpointMeta]:
    """Build the network a checkpoint describes and load its weights (CPU, eval mode).

    An unknown family, an encoding the family does not accept, or a config that
    does not fit (or does not match the tensors) is one ``CheckpointError``,
    raised before any tensor data is read. Another program's network file that a
    family imports (``analysis.models.importer_for``) is converted in memory.
    """
    importer = importer_for(path)
    if importer is not None:
        if not Path(path).is_file():
            raise CheckpointError(f"{path}: no such file")
        model, meta = importer.load(path)
        if family is not None and meta.family != family:
            raise CheckpointError(f"{path}: is a {meta.family!r} network, expected {family!r}")
        return model, meta
    meta, tensors = read_header(path)
    if family is not None and meta.family != family:
        raise CheckpointError(f"{path}: is a {meta.family!r} checkpoint, expected {family!r}")
    try:
        registered = get_family(meta.family)
        registered.check_encoding(meta.input_encoding)
    except ValueError as exc:
        raise CheckpointError(f"{path}: {exc}") from None
    try:
        config = registered.config(meta.config)
        with torch.device("meta"):  # shapes first: a hostile config must not allocate anything
            skeleton = registered.build(config)
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"{path}: bad {meta.family} config: {exc}") from None
    try:
        registered.check_encoding(meta.input_encoding, config)
    except ValueError as exc:
        raise CheckpointError(f"{path}: {exc}") from None
    _check_tensors(path, meta.family, tensors, {name: list(t.shape) for name, t in skeleton.state_dict().items()})
    try:
        state = load_file(str(path))
    except Exception as exc:  # safetensors raises its own error types for damaged data
        raise CheckpointError(f"{path}: damaged tensor data ({exc})") from None
    model = registered.build(config)
    model.load_state_dict({k: v.float() for k, v in state.items()}, strict=True)
    return model.eval(), meta


def describe_file(path: str | Path) -> tuple[CheckpointMeta, dict[str, tuple[str, list[int]]]]:
    """Metadata and {tensor name: (dtype, shape)} of a checkpoint (its header only), or of another
    program's network file that a family imports (read and converted in memory to know them)."""
    if importer_for(path) is None:
        return read_header(path)
    model, meta = load_checkpoint(path)
    return meta, {name: (str(t.dtype).removeprefix("torch."), list(t.shape)) for name, t in model.state_dict().items()}


def _check_tensors(path, family: str, tensors: dict[str, tuple[str, list[int]]],
                   expected: dict[str, list[int]]) -> None:
    """Every tensor the config needs, none else, each of its shape and a float dtype."""
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected))
    if missing or unexpected:
        parts = ([f"missing {', '.join(missing[:5])}"] if missing else []) + \
                ([f"unexpected {', '.join(unexpected[:5])}"] if unexpected else [])
        raise CheckpointError(f"{path}: tensors do not match the {family} config: {'; '.join(parts)}")
    for name, (dtype, shape) in tensors.items():
        if dtype not in DTYPES:
            raise CheckpointError(f"{path}: tensor {name!r} has unsupported dtype {dtype}")
        if shape != expected[name]:
            raise CheckpointError(f"{path}: tensor {name!r} has shape {shape}, the config needs {expected[name]}")


def load_evaluator(path: str | Path, device: str | None = None, *, name: str | None = None):
    """A ready Evaluator for a checkpoint, on ``device`` (see analysis.models.inference.resolve_device)."""
    from analysis.models.inference import TorchEvaluator

    model, meta = load_checkpoint(path)
    evaluator = TorchEvaluator(model, device=device, name=name or network_name(path), trained=meta.trained,
                               encoding=meta.input_encoding)
    evaluator.meta = meta
    return evaluator


def network_name(path: str | Path) -> str:
    """The file's name without its network ending: ``maia-1100`` for ``maia-1100.pb.gz`` too, not ``maia-1100.pb``."""
    from analysis.models import IMPORTERS

    name = Path(path).name
    for ending in sorted((e for endings in IMPORTERS.values() for e in endings), key=len, reverse=True):
        if name.lower().endswith(ending):
            return name[: -len(ending)]
    return Path(path).stem


