"""Dequantising one ``Weights.Layer`` exactly as lc0 does.

lc0's ``LayerAdapter`` (``src/utils/weights_adapter.cc``) reads every layer
as little-endian 16- or 32-bit values. LINEAR16 is the encoding of every
released net: ``theta = u / 65535``, ``w = min * (1 - theta) + max * theta``
in float32. An unset (or ``UNKNOWN_ENCODING``) per-layer encoding means
LINEAR16. Matching lc0 to the last bit keeps our reference tests tight.
"""

from __future__ import annotations

import numpy as np

from analysis.errors import CheckpointError

LINEAR16, FLOAT16, BFLOAT16, FLOAT32 = 1, 2, 3, 4
ENCODING_NAMES = {0: "UNKNOWN_ENCODING", LINEAR16: "LINEAR16", FLOAT16: "FLOAT16", BFLOAT16: "BFLOAT16",
                  FLOAT32: "FLOAT32"}
_WIDTH = {LINEAR16: 2, FLOAT16: 2, BFLOAT16: 2, FLOAT32: 4}


def layer_encoding(layer) -> int:
    """The layer's encoding, unset meaning LINEAR16 (lc0's default)."""
    return layer.encoding or LINEAR16


def layer_size(layer, name: str) -> int:
    """Number of values a layer holds, checking its byte length fits its encoding."""
    return _values(layer_encoding(layer), len(layer.params), name)


def _values(encoding: int, nbytes: int, name: str) -> int:
    if encoding not in _WIDTH:
        raise CheckpointError(f"layer {name}: unknown weight encoding {encoding} (field Layer.encoding)")
    size, rest = divmod(nbytes, _WIDTH[encoding])
    if rest:
        raise CheckpointError(f"layer {name}: {nbytes} bytes is not a whole number of "
                              f"{ENCODING_NAMES[encoding]} values")
    return size


def decode_layer(layer, name: str) -> np.ndarray:
    """The layer's values as float32, shape (n,)."""
    encoding = layer_encoding(layer)
    raw = layer.params  # the protobuf hands out a copy: take it once
    _values(encoding, len(raw), name)
    if encoding == LINEAR16:
        theta = np.frombuffer(raw, "<u2").astype(np.float32) / np.float32(65535.0)
        low, high = np.float32(layer.min_val), np.float32(layer.max_val)
        return low * (np.float32(1) - theta) + high * theta
    if encoding == FLOAT16:
        return np.frombuffer(raw, "<f2").astype(np.float32)
    if encoding == BFLOAT16:
        return (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32)
    return np.frombuffer(raw, "<f4").astype(np.float32)
