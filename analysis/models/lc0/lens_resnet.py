"""The lens on lc0's classical SE-ResNets (``lc0-resnet``: Maia, meangirl).

The body is ``x = act(input_conv(planes))`` then, per residual block, ``x = act(y + x)`` with the
block's branch ``y = SE(conv2(act(conv1(x))))``. Every block's output is in the space the heads
read (there is no final norm), so each readout point goes through the heads unchanged and the
last one is the network's own output. Readout points: ``embed`` (the input convolution), then
``L.block`` for every block L.

Units: ``block`` (one per block: its whole branch y) and ``channel`` (one per channel of a
block's branch, y[c] on every square). A unit's exact write is its part of y, added to the
stream before the block's activation; scaling it multiplies that part by s. There are no
attention heads and no MLP layers: the convolution channels are this family's units.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Mapping, Sequence

import chess
import torch
from torch import nn

from analysis.encoding.lc0_planes import PLANES
from analysis.models.lc0.lens import gather_moves, prepare_lc0, read_lc0, stack_inputs, timeline_prepare_lc0
from analysis.models.lens import LensAdapter, Prepared, ReadOut, UnitKind, hooks

NO_HEADS = "lc0's SE-ResNets are convolutional networks: they have no attention heads to take apart"
NO_MLP = ("lc0's SE-ResNets have no MLP layers: their units are the residual blocks and the channels "
          "of each block (unit kinds 'block' and 'channel')")


@contextmanager
def output_hooks(pairs: list[tuple[nn.Module, object]]) -> Iterator[None]:
    """Forward hooks on modules for the length of a block, removed however it ends."""
    with hooks(*(module.register_forward_hook(fn) for module, fn in pairs)):
        yield


def branch_end(block: nn.Module) -> nn.Module:
    """The module whose output is the block's branch y (the SE unit, else the second conv)."""
    return block.se if block.se is not None else block.conv2


class ResNetLens(LensAdapter):
    """``lc0-resnet``: readouts after every block; blocks and channels as units."""

    family = "lc0-resnet"
    norm_note = "lc0's SE-ResNets have no norm after folding batch norms: every block's output is read as is."

    def __init__(self, model: nn.Module, encoding=None):
        super().__init__(model, encoding)
        c = model.config
        self.readouts = ["embed"] + [f"{i}.block" for i in range(c.blocks)]
        self.units = {"block": UnitKind("block", c.blocks, 1, "a residual block's whole branch"),
                      "channel": UnitKind("channel", c.blocks, c.channels, "one channel of a residual block's branch")}
        self.unavailable = {"head": NO_HEADS, "mlp": NO_MLP, "split": NO_HEADS, "head_patch": NO_HEADS,
                            "attention_zero": NO_HEADS}
        if not c.wdl:
            self.unavailable["wdl"] = "this lc0 net's value head is a single tanh: it has no WDL"

    def prepare(self, board: chess.Board) -> Prepared:
        return prepare_lc0(self.model, board)

    def _hooks(self, scales: Mapping[str, torch.Tensor]) -> list:
        pairs = []
        for i, block in enumerate(self.model.blocks):
            factors = [scales[k][:, i, :, None, None] for k in ("block", "channel") if k in scales]
            if factors:
                pairs.append((branch_end(block), _times(factors)))
        return pairs

    def run(self, prepared: Prepared, variants: int = 1, scales: Mapping[str, torch.Tensor] | None = None,
            capture: bool = False, patches=()) -> tuple[list[torch.Tensor] | None, ReadOut]:
        tokens = prepared.inputs.expand(variants, -1, -1)
        by_point = self.patches_at(prepared, variants, patches)
        with output_hooks(self._hooks(scales or {})):
            seen = self.body(tokens, lambda i, x: self.patched(prepared, i, x, by_point))
        return (seen if capture else None), read_lc0(prepared, self.model.outputs(seen[-1]))

    def body(self, tokens: torch.Tensor, at=None) -> list[torch.Tensor]:
        """The stream (B, C, 8, 8) at every readout point, as ``Lc0ResNet.forward`` computes it
        (``at(point index, stream)``, when given, returns the stream that goes on: the patches)."""
        m, at = self.model, at or (lambda _i, x: x)
        x = at(0, m.act(m.input(tokens.transpose(1, 2).reshape(-1, PLANES, 8, 8))))
        seen = [x]
        for i, block in enumerate(m.blocks):
            x = at(1 + i, block(x))
            seen.append(x)
        return seen

    def square_rows(self, prepared: Prepared, point: str) -> torch.Tensor:
        return prepared.extra["rows"]

    def to_tokens(self, prepared: Prepared, point: str, tensor: torch.Tensor) -> torch.Tensor:
        """(V, C, 8, 8) -> (V, 64, C): token t is the board cell t of the network's frame."""
        return tensor.flatten(2).transpose(1, 2)

    def from_tokens(self, prepared: Prepared, point: str, tokens: torch.Tensor) -> torch.Tensor:
        return tokens.transpose(1, 2).unflatten(2, (8, 8))

    def unembed(self, prepared: Prepared, residual: torch.Tensor, readout: str) -> ReadOut:
        if readout is not None and readout not in self.readouts:  # None: a stack of several points
            raise ValueError(f"unknown readout point {readout!r}")
        return read_lc0(prepared, self.model.outputs(residual))

    def timeline_prepare(self, board):
        return timeline_prepare_lc0(self.model, board)

    def move_logits(self, prepared, residual, rows):
        """One point of many positions through the policy head alone, in one call."""
        return gather_moves(self.model.policy(residual), prepared)

    def capture_hooks(self, store: list) -> list:
        """``body``'s points from the network's own pass: the first block's input (the embedding),
        then every block's output."""
        blocks = self.model.blocks
        return ([blocks[0].register_forward_pre_hook(lambda _m, args: store.append(args[0]))]
                + [block.register_forward_hook(lambda _m, _a, out: store.append(out)) for block in blocks])

    @torch.no_grad()
    def head_writes(self, prepared: Prepared, layer: int):
        raise ValueError(NO_HEADS)

    @torch.no_grad()
    def branches(self, tokens: torch.Tensor) -> list[torch.Tensor]:
        """Every block's branch y (B, C, 8, 8) on a clean pass: the channels' exact writes."""
        kept = []
        pairs = [(branch_end(b), lambda module, args, out: kept.append(out)) for b in self.model.blocks]
        with output_hooks(pairs):
            self.body(tokens)
        return kept

    @torch.no_grad()
    def activations(self, prepared: Sequence[Prepared], kind: str, layer: int) -> torch.Tensor:
        """(B, 64, C): block ``layer``'s branch, every channel on every real square (a1 = 0)."""
        if kind != "channel":
            raise ValueError(f"{kind!r} units have no per-square activations here; 'channel' units do")
        y = self.branches(stack_inputs(prepared))[layer].flatten(2).transpose(1, 2)  # (B, T, C), network frame
        rows = torch.stack([p.extra["rows"] for p in prepared])
        return y.gather(1, rows[:, :, None].expand(-1, -1, y.shape[-1]))


def _times(factors: list[torch.Tensor]):
    def hook(module, args, out):
        for factor in factors:
            out = out * factor
        return out
    return hook
