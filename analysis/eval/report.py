"""Attach measured metrics to an exported checkpoint's metadata."""

from __future__ import annotations

from pathlib import Path

from analysis.checkpoint import load_checkpoint, read_header, save_checkpoint


def attach_metrics(path: Path, metrics: dict) -> dict:
    """Merge ``metrics`` into the checkpoint's metadata (weights untouched); returns the merged dict."""
    meta, _ = read_header(path)
    model, meta = load_checkpoint(path)
    merged = {**meta.metrics, **metrics}
    save_checkpoint(path, model, trained=meta.trained, provenance=meta.provenance, metrics=merged)
    return merged
