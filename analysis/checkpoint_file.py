"""The checkpoint file: one ``.safetensors`` file, metadata in its header, nothing pickled.

Header metadata (all strings, as safetensors requires):

=================  ============================================================
``format``         ``sightline-checkpoint``
``format_version`` ``1``
``family``         model family, e.g. ``chessformer``
``config``         the family's config dataclass as JSON
``input_encoding`` the board encoding the network was trained on
``trained``        ``true`` or ``false``: random weights are never passed off as trained
``provenance``     JSON: data, steps, wall time, hardware, seed ...
``metrics``        JSON: what the network measured (puzzles, STS, Elo ...)
=================  ============================================================

Loading reads and checks the header and every tensor's name, dtype and shape
before it touches tensor data; any problem is one ``CheckpointError`` whose
message names it.

This module knows the file only: no model family is imported here, so every layer
(the families' importers included) may read and write checkpoints through it.
``analysis.checkpoint`` builds networks from them.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from analysis.errors import CheckpointError

if TYPE_CHECKING:  # reading a header needs no torch, so the web process never loads it for one
    import torch

FORMAT = "sightline-checkpoint"
FORMAT_VERSION = 1
_MAX_HEADER = 100 * 1024 * 1024
DTYPES = ("F32", "F16", "BF16")  # the tensor dtypes a checkpoint may hold (safetensors names)


@dataclass
class CheckpointMeta:
    family: str
    config: dict[str, Any]
    input_encoding: str
    trained: bool
    provenance: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    format_version: int = FORMAT_VERSION

    def to_header(self) -> dict[str, str]:
        return {
            "format": FORMAT, "format_version": str(self.format_version), "family": self.family,
            "config": json.dumps(self.config, sort_keys=True), "input_encoding": self.input_encoding,
            "trained": "true" if self.trained else "false",
            "provenance": json.dumps(self.provenance, sort_keys=True),
            "metrics": json.dumps(self.metrics, sort_keys=True),
        }


def write_atomically(path: Path, tensors: dict[str, "torch.Tensor"], meta: CheckpointMeta) -> Path:
    """Write a safetensors checkpoint via ``NAME.partial``: the file appears whole or not at all."""
    from safetensors.torch import save_file

    partial = path.with_name(path.name + ".partial")
    try:
        save_file(tensors, str(partial), metadata=meta.to_header())
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path


def rewrite_metadata(path: str | Path, meta: CheckpointMeta) -> Path:
    """Write ``meta`` into a checked checkpoint, its tensors kept as stored (dtype included);
    the file is replaced whole or not at all."""
    from safetensors import safe_open

    path = Path(path)
    with safe_open(str(path), "pt") as f:
        tensors = {name: f.get_tensor(name) for name in f.keys()}
    return write_atomically(path, tensors, meta)


def read_header(path: str | Path) -> tuple[CheckpointMeta, dict[str, tuple[str, list[int]]]]:
    """Metadata and {tensor name: (dtype, shape)}, checked, without reading tensor data."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: no such file")
    size = path.stat().st_size
    with path.open("rb") as f:
        start = f.read(8)
        if start[:4] == b"PK\x03\x04":  # torch.save's zip container
            raise _pickled(path)
        if len(start) < 8:
            raise CheckpointError(f"{path}: truncated: {size} bytes is too short for a safetensors header")
        (header_len,) = struct.unpack("<Q", start)
        if header_len > min(_MAX_HEADER, size - 8):
            if start[:1] == b"\x80":  # pickle protocol 2+ opcode
                raise _pickled(path)
            raise CheckpointError(f"{path}: not a safetensors file, or truncated: its header claims "
                                  f"{header_len} bytes but the file has {size - 8} after the length")
        raw = f.read(header_len)
    try:
        header = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        if start[:1] == b"\x80":
            raise _pickled(path) from None
        raise CheckpointError(f"{path}: damaged safetensors header ({exc})") from None
    if not isinstance(header, dict):
        raise CheckpointError(f"{path}: damaged safetensors header (not a JSON object)")

    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise CheckpointError(f"{path}: damaged safetensors header (metadata must map names to strings)")
    tensors: dict[str, tuple[str, list[int]]] = {}
    data_end = 0
    for name, info in header.items():
        entry = _tensor_entry(info)
        if entry is None:
            raise CheckpointError(f"{path}: damaged entry for tensor {name!r}")
        dtype, shape, end = entry
        tensors[name] = (dtype, shape)
        data_end = max(data_end, end)
    available = size - 8 - header_len
    if data_end > available:
        raise CheckpointError(f"{path}: truncated: tensor data needs {data_end} bytes, the file holds {available}")
    return _parse_metadata(path, metadata), tensors


def _tensor_entry(info: Any) -> tuple[str, list[int], int] | None:
    """(dtype, shape, end offset) of one header entry, or None when it is malformed."""
    if not isinstance(info, dict):
        return None
    dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    def natural(x: Any) -> bool:
        return isinstance(x, int) and not isinstance(x, bool) and x >= 0
    if not isinstance(dtype, str) or not isinstance(shape, list) or not all(natural(d) for d in shape):
        return None
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(natural(o) for o in offsets)
            and offsets[0] <= offsets[1]):
        return None
    return dtype, shape, offsets[1]


def _pickled(path: Path) -> CheckpointError:
    return CheckpointError(f"{path}: this is a pickled PyTorch file; only .safetensors checkpoints are loaded, "
                           "since unpickling can run arbitrary code")


def _parse_metadata(path: Path, metadata: dict[str, str]) -> CheckpointMeta:
    if metadata.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a Sightline checkpoint (header metadata has no format={FORMAT!r})")
    try:
        version = int(metadata.get("format_version", ""))
    except ValueError:
        raise CheckpointError(f"{path}: format_version is missing or not a number") from None
    if version != FORMAT_VERSION:
        raise CheckpointError(f"{path}: format version {version} is not supported (this build reads {FORMAT_VERSION})")
    if metadata.get("trained") not in ("true", "false"):
        raise CheckpointError(f"{path}: metadata 'trained' must be 'true' or 'false'")
    parsed = {}
    for key in ("config", "provenance", "metrics"):
        try:
            parsed[key] = json.loads(metadata.get(key, "{}"))
        except json.JSONDecodeError:
            raise CheckpointError(f"{path}: metadata {key!r} is not valid JSON") from None
        if not isinstance(parsed[key], dict):
            raise CheckpointError(f"{path}: metadata {key!r} must be a JSON object")
    return CheckpointMeta(family=metadata.get("family", ""), config=parsed["config"],
                          input_encoding=metadata.get("input_encoding", ""), trained=metadata["trained"] == "true",
                          provenance=parsed["provenance"], metrics=parsed["metrics"], format_version=version)


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
