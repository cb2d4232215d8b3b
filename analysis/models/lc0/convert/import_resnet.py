"""Config and state dict of an ``Lc0ResNet`` from a parsed lc0 file.

Sizes are read off the weights as lc0's loader does; every tensor is shape
checked (``tensors.take``), so a damaged file fails here, before any module
is built.
"""

from __future__ import annotations

from analysis.encoding.lc0_planes import PLANES
from analysis.errors import CheckpointError
from analysis.models.lc0.config import ResNetConfig
from analysis.models.lc0.convert.reader import Lc0File
from analysis.models.lc0.convert.tensors import folded_conv, linear, present, prefixed, size


def _conv(state: dict, name: str, block, cout: int, cin: int, k: int, path: str) -> None:
    state[f"{name}.weight"], state[f"{name}.bias"] = folded_conv(block, cout, cin, k, path)


def resnet_config(net: Lc0File) -> ResNetConfig:
    w, fmt = net.weights, net.format
    if fmt.policy == 3:
        raise CheckpointError("unsupported net format: a convolutional body with POLICY_ATTENTION "
                              "(field NetworkFormat.policy = 3)")
    channels, rest = divmod(size(w.input, "weights", "input"), PLANES * 9)
    if channels < 1 or rest:
        raise CheckpointError("weights input.weights do not hold a 3x3 convolution from 112 planes")
    se = size(w.residual[0].se, "w1", "residual.0.se") // channels if len(w.residual) and present(
        w.residual[0], "se") else 0
    mlh = fmt.moves_left == 1 and present(w, "moves_left")
    return ResNetConfig(
        blocks=len(w.residual), channels=channels, se_channels=se,
        policy="convolution" if fmt.policy == 2 else "classical",
        policy_channels=size(w.policy, "weights", "policy") // channels if fmt.policy == 1 else 0,
        wdl=fmt.value == 2, value_channels=size(w.value, "weights", "value") // channels,
        value_hidden=size(w, "ip1_val_b", ""),
        moves_left_channels=size(w.moves_left, "weights", "moves_left") // channels if mlh else 0,
        moves_left_hidden=size(w, "ip1_mov_b", "") if mlh else 0,
        activation="mish" if fmt.default_activation == 1 else "relu", input_format=fmt.input)


def resnet_state(net: Lc0File, c: ResNetConfig) -> dict:
    w, state, C = net.weights, {}, c.channels
    _conv(state, "input", w.input, C, PLANES, 3, "input")
    for i, block in enumerate(w.residual):
        path = f"residual.{i}"
        _conv(state, f"blocks.{i}.conv1", block.conv1, C, C, 3, f"{path}.conv1")
        _conv(state, f"blocks.{i}.conv2", block.conv2, C, C, 3, f"{path}.conv2")
        if c.se_channels:
            state.update(prefixed(f"blocks.{i}.se.fc1", linear(block.se, "w1", "b1", c.se_channels, C, f"{path}.se")))
            state.update(prefixed(f"blocks.{i}.se.fc2", linear(block.se, "w2", "b2", 2 * C, c.se_channels,
                                                               f"{path}.se")))
    if c.policy == "convolution":
        _conv(state, "policy.conv1", w.policy1, C, C, 3, "policy1")
        _conv(state, "policy.conv2", w.policy, 80, C, 3, "policy")
    else:
        _conv(state, "policy.conv", w.policy, c.policy_channels, C, 1, "policy")
        state.update(prefixed("policy.fc", linear(w, "ip_pol_w", "ip_pol_b", 1858, 64 * c.policy_channels, "")))
    _scalar_head(state, "value", w, w.value, "value", "val", c.value_channels, c.value_hidden, 3 if c.wdl else 1, C)
    if c.moves_left_channels:
        _scalar_head(state, "moves_left", w, w.moves_left, "moves_left", "mov", c.moves_left_channels,
                     c.moves_left_hidden, 1, C)
    return state


def _scalar_head(state, name, w, block, path, tag, conv_out, hidden, out, channels) -> None:
    _conv(state, f"{name}.conv", block, conv_out, channels, 1, path)
    state.update(prefixed(f"{name}.fc1", linear(w, f"ip1_{tag}_w", f"ip1_{tag}_b", hidden, 64 * conv_out, "")))
    state.update(prefixed(f"{name}.fc2", linear(w, f"ip2_{tag}_w", f"ip2_{tag}_b", out, hidden, "")))
