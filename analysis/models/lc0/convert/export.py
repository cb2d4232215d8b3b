"""A Sightline lc0-resnet checkpoint written back in lc0's ``.pb.gz`` format, so lc0 can search with it.

The site keeps only the converted checkpoint of an uploaded lc0 net (and ships Maia that way), so
running lc0's own search on "the same net" needs the file lc0 reads. Layers are written where the
importer (``import_resnet``, beside this module) reads them, with batch norm already folded into
each convolution's weights and biases (lc0 takes a conv block without batch-norm statistics as
is). Values are LINEAR16, the one encoding lc0 0.32.1 reads: each layer is quantised to 65,536
steps between its own min and max, so lc0's outputs differ from Sightline's by that rounding
(``tests/test_lc0_search.py`` measures it). Attention-body nets are not exported.
"""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import numpy as np

from analysis.errors import CheckpointError
from analysis.models.lc0.convert.proto import net_class
from analysis.models.lc0.convert.reader import MAGIC
from analysis.models.lc0.convert.weights import LINEAR16


def _put(message, field: str, tensor) -> None:
    values = tensor.detach().float().cpu().numpy().ravel()
    layer = getattr(message, field)
    layer.min_val, layer.max_val = float(values.min()), float(values.max())
    span = max(layer.max_val - layer.min_val, 1e-30)
    layer.params = np.round((values - layer.min_val) / span * 0xFFFF).astype("<u2").tobytes()


def _conv(block, state: dict, name: str) -> None:
    _put(block, "weights", state[f"{name}.weight"])
    _put(block, "biases", state[f"{name}.bias"])


def _dense(message, w_field: str, b_field: str, state: dict, name: str) -> None:
    _put(message, w_field, state[f"{name}.weight"])
    _put(message, b_field, state[f"{name}.bias"])


def resnet_net(model):
    """The ``pblczero.Net`` message of an ``Lc0ResNet``."""
    c, state = model.config, model.state_dict()
    net = net_class()()
    net.magic, net.min_version.major, net.min_version.minor = MAGIC, 0, 32
    net.format.weights_encoding = LINEAR16
    fmt = net.format.network_format
    fmt.input, fmt.output, fmt.network = c.input_format, (2 if c.wdl else 1), (4 if c.se_channels else 3)
    fmt.policy, fmt.value = (2 if c.policy == "convolution" else 1), (2 if c.wdl else 1)
    fmt.moves_left, fmt.default_activation = (1 if c.moves_left_channels else 0), (1 if c.activation == "mish" else 0)
    w = net.weights
    _conv(w.input, state, "input")
    for i in range(c.blocks):
        block = w.residual.add()
        _conv(block.conv1, state, f"blocks.{i}.conv1")
        _conv(block.conv2, state, f"blocks.{i}.conv2")
        if c.se_channels:
            _dense(block.se, "w1", "b1", state, f"blocks.{i}.se.fc1")
            _dense(block.se, "w2", "b2", state, f"blocks.{i}.se.fc2")
    if c.policy == "convolution":
        _conv(w.policy1, state, "policy.conv1")
        _conv(w.policy, state, "policy.conv2")
    else:
        _conv(w.policy, state, "policy.conv")
        _dense(w, "ip_pol_w", "ip_pol_b", state, "policy.fc")
    for head, block, tag in (("value", w.value, "val"), ("moves_left", w.moves_left, "mov")):
        if head == "moves_left" and not c.moves_left_channels:
            continue
        _conv(block, state, f"{head}.conv")
        _dense(w, f"ip1_{tag}_w", f"ip1_{tag}_b", state, f"{head}.fc1")
        _dense(w, f"ip2_{tag}_w", f"ip2_{tag}_b", state, f"{head}.fc2")
    return net


def export_lc0(model, out: Path) -> Path:
    """Write ``model`` (an lc0-resnet network) to ``out`` in lc0's format; whole or not at all."""
    if getattr(model, "family", None) != "lc0-resnet" and type(model).__name__ != "Lc0ResNet":
        raise CheckpointError("only lc0-resnet networks (Maia and other classical lc0 nets) can be given to lc0")
    out = Path(out)
    partial = out.with_name(out.name + ".partial")
    partial.write_bytes(gzip.compress(resnet_net(model).SerializeToString(), compresslevel=1))
    partial.replace(out)
    return out


def exported_net(checkpoint: Path, model, cache_dir: Path) -> Path:
    """``model`` (loaded from ``checkpoint``) in lc0's format under ``cache_dir``, written once per
    checkpoint: the file is named by the checkpoint's SHA-256, so the next call finds it."""
    digest = hashlib.sha256(Path(checkpoint).read_bytes()).hexdigest()[:32]
    out = Path(cache_dir) / f"{digest}.pb.gz"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        export_lc0(model, out)
    return out
