"""The lens on Giraffe: its hidden units and its input feature groups.

Giraffe is two shallow MLPs side by side (the evaluator gives the value, the move evaluator each
move's P(best)): a grouped first layer, one hidden layer, one output unit. There is no residual
stream, so there is no logit lens through depth: the first layer's units live in a space the
output layer never reads, and the one readout point is ``hidden``, the last hidden layer of both
networks, which the output layers read as is (so it gives the network's own output). Its residual
is (V, 1 + M, W): row 0 the evaluator's hidden units, then one row per legal move (the move
evaluator's second pass), zero-padded to the wider of the two.

Units: ``mlp`` (1 x (hidden + move_hidden)): the evaluator's hidden units, then the move
evaluator's; a unit's write is its ReLU output times its output weight, scaled where it enters the
output layer (in both of the move evaluator's passes). ``group`` (2 x 3: layer 0 the evaluator,
layer 1 the move evaluator; units global, piece, square): a feature group's first-layer units,
whose writes (their columns of the hidden layer) plus the hidden bias are the hidden layer's input.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import chess
import torch
import torch.nn.functional as F
from torch import nn

from analysis.models.lens import LensAdapter, Prepared, ReadOut, UnitKind, hooks

GROUPS = ("global", "piece", "square")
NO_HEADS = "Giraffe's networks are plain multilayer perceptrons: they have no attention heads"
NO_DEPTH = ("Giraffe has no residual stream: only its last hidden layer is read by the output layers, "
            "so there is one readout point and no logit lens through depth")
NO_WDL = "Giraffe's value is a single tanh output: it has no WDL"
NO_SQUARES = ("Giraffe's hidden layer has no squares: its units read the whole position (and, in the move "
              "evaluator, one move), so there is no square's row to read or patch")
NO_PATCH = (NO_SQUARES + "; nor can it be patched whole: the move evaluator runs one row per legal move of its "
            "own position, which another position's pass does not have")


def group_scaling(scale: torch.Tensor, sizes: Sequence[int]):
    """A pre-hook scaling the hidden layer's input by (V, 3) group scales, each over its units' columns."""
    sizes_t = torch.tensor(list(sizes), device=scale.device)

    def hook(module, args):
        s = scale.repeat_interleave(sizes_t, dim=-1)  # (V, units)
        x = args[0]
        return (x * s.view(s.shape[0], *([1] * (x.dim() - 2)), -1).to(x.dtype),)
    return hook


def unit_scaling(scale: torch.Tensor):
    def hook(module, args):
        x = args[0]
        return (x * scale.view(scale.shape[0], *([1] * (x.dim() - 2)), -1).to(x.dtype),)
    return hook


class GiraffeLens(LensAdapter):
    family = "giraffe"
    norm_note = "Giraffe has no norms; its one readout point is the last hidden layer, read as is."

    def __init__(self, model: nn.Module, encoding):
        super().__init__(model, encoding)
        c = model.config
        self.readouts = ["hidden"]
        self.units = {"mlp": UnitKind("mlp", 1, c.hidden + c.move_hidden,
                                      "a hidden unit (the evaluator's, then the move evaluator's)"),
                      "group": UnitKind("group", 2, 3, "an input feature group (global, piece, square) "
                                                       "of the evaluator (layer 0) or move evaluator (layer 1)")}
        self.unavailable = {"head": NO_HEADS, "wdl": NO_WDL, "depth": NO_DEPTH, "split": NO_HEADS, "timeline": NO_DEPTH,
                            "patch": NO_PATCH, "head_patch": NO_HEADS, "attention_zero": NO_HEADS}
        e, m = model.evaluator.first, model.move_evaluator
        self.sizes = ((e.global_in.out_features, e.piece_in.out_features, e.square_in.out_features),
                      (m.global_in.out_features, m.piece_in.out_features, m.square_in.out_features))

    def prepare(self, board: chess.Board) -> Prepared:
        moves, indices = self.encoding.legal_moves(board)
        inputs = torch.from_numpy(self.encoding.encode([board])).to(self.device)
        return Prepared(board, list(moves), inputs, {"indices": torch.as_tensor(indices, device=self.device)})

    def _hooks(self, scales: Mapping[str, torch.Tensor], kept: dict) -> list:
        e, m, h = self.model.evaluator, self.model.move_evaluator, self.model.config.hidden
        handles = []
        if "mlp" in scales:
            handles += [e.out.register_forward_pre_hook(unit_scaling(scales["mlp"][:, 0, :h])),
                        m.out.register_forward_pre_hook(unit_scaling(scales["mlp"][:, 0, h:]))]
        if "group" in scales:
            handles += [net.hidden.register_forward_pre_hook(group_scaling(scales["group"][:, i], self.sizes[i]))
                        for i, net in enumerate((e, m))]
        handles += [net.out.register_forward_pre_hook(lambda mod, args, i=i: kept.__setitem__(i, args[0]))
                    for i, net in enumerate((e, m))]  # the move evaluator's second pass overwrites its first
        return handles

    def run(self, prepared: Prepared, variants: int = 1, scales: Mapping[str, torch.Tensor] | None = None,
            capture: bool = False, patches=()) -> tuple[list[torch.Tensor] | None, ReadOut]:
        self.patches_at(prepared, variants, patches)  # refuses every patch, with the reason
        kept: dict = {}
        with hooks(*self._hooks(scales or {}, kept)):
            out = self.model(prepared.inputs.expand(variants, -1))
        readout = ReadOut(logits=out["policy"][:, prepared.extra["indices"]], score=(out["value"] + 1) / 2)
        return ([self._stack(kept[0], kept[1])] if capture else None), readout

    def _stack(self, value_hidden: torch.Tensor, move_hidden: torch.Tensor) -> torch.Tensor:
        width = max(value_hidden.shape[-1], move_hidden.shape[-1])
        return torch.cat([F.pad(value_hidden, (0, width - value_hidden.shape[-1]))[:, None],
                          F.pad(move_hidden, (0, width - move_hidden.shape[-1]))], dim=1)

    def unembed(self, prepared: Prepared, residual: torch.Tensor, readout: str) -> ReadOut:
        if readout is not None and readout not in self.readouts:  # None: a stack of several points
            raise ValueError(f"unknown readout point {readout!r}: {NO_DEPTH}")
        c, (e, m) = self.model.config, (self.model.evaluator, self.model.move_evaluator)
        value = torch.tanh(e.out(residual[:, 0, :c.hidden])).squeeze(-1)
        logits = m.out(residual[:, 1:, :c.move_hidden]).squeeze(-1)
        return ReadOut(logits=logits[:, prepared.extra["indices"]], score=(value + 1) / 2)

    def square_rows(self, prepared: Prepared, point: str) -> torch.Tensor:
        raise ValueError(NO_SQUARES)

    def point_vector(self, prepared: Prepared, point: str, tensor: torch.Tensor) -> torch.Tensor:
        """(V, hidden): the evaluator's hidden units (row 0), the part that reads the position alone."""
        self.check_point(point)
        return tensor[:, 0, :self.model.config.hidden]

    @torch.no_grad()
    def head_writes(self, prepared: Prepared, layer: int):
        raise ValueError(NO_HEADS)

    @torch.no_grad()
    def group_writes(self, prepared: Prepared, layer: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Network ``layer`` (0 evaluator, 1 move evaluator)'s groups taken apart on a clean pass:
        (writes (3, *rows, hidden), the hidden bias, the hidden layer's input (*rows, hidden))."""
        net = (self.model.evaluator, self.model.move_evaluator)[layer]
        kept = {}
        with hooks(net.hidden.register_forward_pre_hook(lambda mod, args: kept.__setitem__("x", args[0]))):
            self.model(prepared.inputs)
        parts = kept["x"][0].split(list(self.sizes[layer]), dim=-1)
        columns = net.hidden.weight.split(list(self.sizes[layer]), dim=-1)
        writes = torch.stack([part @ w.T for part, w in zip(parts, columns)])
        return writes, net.hidden.bias, net.hidden(kept["x"][0])

    @torch.no_grad()
    def activations(self, prepared: Sequence[Prepared], kind: str, layer: int) -> torch.Tensor:
        """(B, 1, hidden + move_hidden): Giraffe's units have no squares; a move-evaluator unit's
        activation on a position is its largest over the legal moves."""
        if kind != "mlp":
            raise ValueError(f"{kind!r} units have no activations to read; 'mlp' units do")
        kept: dict = {}
        with hooks(*self._hooks({}, kept)):
            self.model(torch.cat([p.inputs for p in prepared]))
        counts = torch.tensor([len(p.moves) for p in prepared], device=self.device)
        real = torch.arange(kept[1].shape[1], device=self.device)[None, :] < counts[:, None]  # (B, M)
        moves = kept[1].masked_fill(~real[..., None], float("-inf")).amax(dim=1)
        moves = torch.where(counts[:, None] > 0, moves, torch.zeros_like(moves))  # no legal move: nothing fires
        return torch.cat([kept[0], moves], dim=-1)[:, None]
