"""An lc0 file straight into a torch network: the reading direction of lc0's format, end to end.

``read_net`` parses and checks the file, ``import_resnet`` / ``import_attention`` turn it into a
config and a state dict, and ``analysis.models.lc0.model.build`` gives the module they fill.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from analysis.errors import CheckpointError
from analysis.models.lc0.convert.import_attention import attention_config, attention_state
from analysis.models.lc0.convert.import_resnet import resnet_config, resnet_state
from analysis.models.lc0.convert.reader import Lc0File, read_net
from analysis.models.lc0.model import ATTENTION, RESNET, build


def from_lc0(net: Lc0File) -> nn.Module:
    """The torch network of a parsed lc0 file, weights loaded, in eval mode."""
    if net.format.attention_body:
        config, state = attention_config(net), None
        state = attention_state(net, config)
    else:
        config = resnet_config(net)
        state = resnet_state(net, config)
    try:
        with torch.device("meta"):  # the decoded tensors become the parameters: no second copy
            model = build(ATTENTION if net.format.attention_body else RESNET, config)
    except ValueError as exc:
        raise CheckpointError(f"unsupported network: {exc}") from None
    _check_shapes(model, state)
    model.load_state_dict(state, strict=True, assign=True)
    return model.eval()


def _check_shapes(model: nn.Module, state: dict[str, torch.Tensor]) -> None:
    expected = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    missing = sorted(set(expected) - set(state))
    if missing:
        raise CheckpointError(f"missing weights for {', '.join(missing[:5])}")
    for name, tensor in state.items():
        if tuple(tensor.shape) != expected.get(name, tuple(tensor.shape)):
            raise CheckpointError(f"weights for {name} have shape {tuple(tensor.shape)}, need {expected[name]}")


def load_lc0(path: str | Path) -> nn.Module:
    """Read an lc0 ``.pb.gz`` straight into a torch network."""
    return from_lc0(read_net(path))
