"""Taking named, shape-checked tensors out of the protobuf ``Weights`` message.

Every read goes through ``Reader``, so a missing or mis-sized layer is one
``CheckpointError`` naming the layer's path (e.g. ``encoder.3.mha.q_w``).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from analysis.errors import CheckpointError
from analysis.models.lc0.convert.weights import decode_layer, layer_size

BN_EPS = 1e-5  # lc0's batch-norm epsilon


def present(message, field: str) -> bool:
    """Whether an optional sub-message or layer is set (and, for a layer, non-empty)."""
    if not message.HasField(field):
        return False
    sub = getattr(message, field)
    return bool(sub.params) if hasattr(sub, "params") else True


def size(message, field: str, path: str) -> int:
    """Number of values of a layer, 0 when it is absent."""
    return layer_size(getattr(message, field), f"{path}.{field}") if present(message, field) else 0


def take(message, field: str, shape: tuple[int, ...], path: str) -> torch.Tensor:
    """A required layer as a float32 tensor of ``shape``."""
    name = f"{path}.{field}" if path else field
    if not present(message, field):
        raise CheckpointError(f"missing weights {name}")
    layer = getattr(message, field)
    held = layer_size(layer, name)
    if held != math.prod(shape):  # checked before decoding: a mis-sized layer allocates nothing
        raise CheckpointError(f"weights {name} hold {held} values, the network needs "
                              f"{math.prod(shape)} ({' x '.join(map(str, shape))})")
    return torch.from_numpy(decode_layer(layer, name).reshape(shape).copy())


def take_or(message, field: str, shape: tuple[int, ...], path: str, fill: float) -> torch.Tensor:
    """An optional layer, or ``fill`` everywhere when absent."""
    if present(message, field):
        return take(message, field, shape, path)
    return torch.full(shape, fill, dtype=torch.float32)


def folded_conv(block, cout: int, cin: int, k: int, path: str) -> tuple[torch.Tensor, torch.Tensor]:
    """A ConvBlock's weight and bias with batch norm folded in.

    lc0's ``bn_stddivs`` holds the variance: s = gamma / sqrt(var + eps),
    w' = w * s, b' = beta - s * (mean - bias).
    """
    w = take(block, "weights", (cout, cin, k, k), path)
    b = take_or(block, "biases", (cout,), path, 0.0)
    if present(block, "bn_means"):
        mean, var = take(block, "bn_means", (cout,), path), take(block, "bn_stddivs", (cout,), path)
        gamma = take_or(block, "bn_gammas", (cout,), path, 1.0)
        beta = take_or(block, "bn_betas", (cout,), path, 0.0)
        s = gamma / torch.sqrt(var + np.float32(BN_EPS))
        w, b = w * s[:, None, None, None], beta - s * (mean - b)
    return w, b


def linear(message, w_field: str, b_field: str, out: int, inp: int, path: str) -> dict[str, torch.Tensor]:
    """A dense layer stored row-major [out, in], i.e. ``nn.Linear``'s layout."""
    return {"weight": take(message, w_field, (out, inp), path), "bias": take(message, b_field, (out,), path)}


def prefixed(prefix: str, tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {f"{prefix}.{k}": v for k, v in tensors.items()}
