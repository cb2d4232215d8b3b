"""Compact attention maps: uint8 per query row, plus one float32 scale per row.

A map row is a softmax (non-negative, sums to 1). Dividing by the row's
maximum and rounding to 8 bits keeps every row's shape to 1/255 of its peak
at a quarter of float32's size; zlib then shrinks the mostly-small values.
The browser multiplies back by the row scale, so "row" and "column" views
both see real probabilities.
"""

from __future__ import annotations

import base64
import zlib

import numpy as np


def encode_maps(maps: np.ndarray) -> bytes:
    """(layers, heads, 64, 64) float attention -> compressed bytes."""
    maps = np.asarray(maps, dtype=np.float32)
    if maps.ndim != 4 or maps.shape[2:] != (64, 64):
        raise ValueError(f"attention must have shape (layers, heads, 64, 64), got {maps.shape}")
    scale = maps.max(axis=3)
    safe = np.where(scale > 0, scale, 1.0)[..., None]
    quantised = np.rint(np.clip(maps / safe, 0.0, 1.0) * 255).astype(np.uint8)
    return zlib.compress(quantised.tobytes() + scale.astype("<f4").tobytes(), level=6)


def decode_layer(blob: bytes, layers: int, heads: int, layer: int) -> tuple[bytes, bytes]:
    """(uint8 maps of shape (heads, 64, 64), float32 scales (heads, 64)) for one layer."""
    raw = zlib.decompress(blob)
    per_layer_q = heads * 64 * 64
    q_start = layer * per_layer_q
    scale_base = layers * per_layer_q
    s_start = scale_base + layer * heads * 64 * 4
    return raw[q_start:q_start + per_layer_q], raw[s_start:s_start + heads * 64 * 4]


def layer_payload(blob: bytes, layers: int, heads: int, layer: int) -> dict:
    """JSON-ready payload for one layer (base64 of the uint8 maps and float32 scales)."""
    q, scale = decode_layer(blob, layers, heads, layer)
    return {"layers": layers, "heads": heads, "layer": layer, "encoding": "u8-row-scaled",
            "maps": base64.b64encode(q).decode("ascii"), "scales": base64.b64encode(scale).decode("ascii")}


def dequantise(q: bytes, scale: bytes, heads: int) -> np.ndarray:
    """Inverse of the encoding for one layer (tests and offline use)."""
    maps = np.frombuffer(q, dtype=np.uint8).reshape(heads, 64, 64).astype(np.float32) / 255.0
    return maps * np.frombuffer(scale, dtype="<f4").reshape(heads, 64, 1)
