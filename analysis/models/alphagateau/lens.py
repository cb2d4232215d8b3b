"""The lens on AlphaGateau: its node and edge streams, and each GATEAU layer's one attention head.

The network keeps two residual streams, nodes h (N, K) and edges g (E, K); each ResGATEAU block
adds its two GATEAU layers' result to both. The value head reads the nodes, the policy head the
edges, and neither stream meets a norm before the heads other than the heads' own, so every block's
output goes through the heads unchanged; the last is the network's own output. Readout points:
``embed`` (the two stems), then ``L.block`` for every block L. A readout's residual is the two
streams stacked along the rows: (V, N + E, K), nodes first.

Units: ``head``, one per GATEAU layer (2 per block, in forward order). A GATEAU layer's node
output is ``W_0 h_i + sum_j a_ij (W_h h_j + W_g g_ij)``: the attention-weighted sum is the head's
exact write and ``W_0 h_i`` (the self term) plays the part of the bias. Scaling the head
multiplies its write by s; the edge update (eq. 4) has no attention and is not scaled.

``channel``, one per channel of a ResGATEAU block's node write x (the block adds ``h + x``): as an
lc0 SE-ResNet's channels, x[:, c] on every square is the channel's exact write to the node stream,
and scaling it multiplies that write (the block's edge write y is left as is: the edge stream's
channel c is another coordinate, read by the policy head). Its activation (neurons) is that write on
each node, put on real squares (nodes are the mover's frame). AlphaGateau has no MLP layers: besides
the heads, its only non-linear units are the BatchNorm-ReLUs that feed each GATEAU layer.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import chess
import torch
from torch import nn

from analysis.encoding.graph import board_size, graph_for_width, split_input
from analysis.encoding.graph_geometry import square_of_node
from analysis.models.alphagateau.model import _graph_tensors
from analysis.models.lens import LensAdapter, Prepared, ReadOut, UnitKind, hooks

NO_MLP = ("AlphaGateau has no MLP layers: its GATEAU layers are linear maps mixed by one attention head "
          "over the move graph, so its units are the heads and the channels of each block's node write "
          "(unit kinds 'head' and 'channel')")
NO_WDL = "AlphaGateau's value head is a single tanh: it has no WDL"
NO_HEAD_PATCH = ("a GATEAU layer's one head has no output projection that reads it: its write is the layer's "
                 "node output less the self term, so patching it is patching the block (use the residual patch)")
NO_ATTENTION_ZERO = ("a GATEAU layer attends over the move graph's edges, not a square-by-square map: a node "
                     "weighs only the squares a move reaches it from, one weight an edge (several a pair for "
                     "promotions), so there is no 64 x 64 entry to zero")
NO_SPLIT = ("a GATEAU layer's attention logit is one LeakyReLU of the updated edge features (eq. 5): "
            "it has no separate content and position terms to split")


def scaled_head(scale: torch.Tensor):
    """A forward hook on a Gateau layer: h' = W_0 h + s * (h' - W_0 h), with (V,) scales s."""
    def hook(module, args, out):
        h_new, g_new, alpha = out
        own = module.w_0(args[0])
        return own + scale[:, None, None].to(h_new.dtype) * (h_new - own), g_new, alpha
    return hook


def scaled_node_write(scale: torch.Tensor):
    """A forward hook on a ResGATEAU block: h + s_c x_c for each channel c, with (V, K) scales s."""
    def hook(module, args, out):
        h, h_new = args[0], out[0]
        return (h + scale[:, None, :].to(h_new.dtype) * (h_new - h), *out[1:])
    return hook


class AlphaGateauLens(LensAdapter):
    family = "alphagateau"
    norm_note = ("AlphaGateau's streams meet no norm before the heads (the heads begin with their own "
                 "batch norm): every block's output is read through the heads as is.")

    def __init__(self, model: nn.Module, encoding):
        super().__init__(model, encoding)
        c = model.config
        self.readouts = ["embed"] + [f"{i}.block" for i in range(c.blocks)]
        self.units = {"head": UnitKind("head", c.gateau_layers, 1, "a GATEAU layer's attention over incoming moves"),
                      "channel": UnitKind("channel", c.blocks, c.width, "one channel of a block's node write")}
        self.unavailable = {"mlp": NO_MLP, "wdl": NO_WDL, "split": NO_SPLIT, "head_patch": NO_HEAD_PATCH,
                            "attention_zero": NO_ATTENTION_ZERO}

    def layers(self) -> list[nn.Module]:
        return [gateau for block in self.model.blocks for gateau in (block.gateau1, block.gateau2)]

    def prepare(self, board: chess.Board) -> Prepared:
        moves, edges = self.encoding.legal_moves(board)
        inputs = torch.from_numpy(self.encoding.encode([board])).to(self.device)
        return Prepared(board, list(moves), inputs, {"indices": torch.as_tensor(edges, device=self.device)})

    def run(self, prepared: Prepared, variants: int = 1, scales: Mapping[str, torch.Tensor] | None = None,
            capture: bool = False, patches=()) -> tuple[list[torch.Tensor] | None, ReadOut]:
        scale, channel = (scales or {}).get("head"), (scales or {}).get("channel")
        handles = [] if scale is None else [g.register_forward_hook(scaled_head(scale[:, i, 0]))
                                            for i, g in enumerate(self.layers())]
        if channel is not None:
            handles += [b.register_forward_hook(scaled_node_write(channel[:, i])) for i, b in enumerate(self.model.blocks)]
        by_point = self.patches_at(prepared, variants, patches)
        with hooks(*handles):
            seen = self.streams(prepared.inputs.expand(variants, -1),
                                lambda i, x: self.patched(prepared, i, x, by_point) if by_point else x)
        return (seen if capture else None), self._read(prepared, seen[-1])

    def streams(self, inputs: torch.Tensor, at=None) -> list[torch.Tensor]:
        """Nodes and edges stacked (V, N + E, K) at every readout point, as ``AlphaGateau.forward``
        (``at(point index, stacked)``, when given, returns the streams that go on: the patches)."""
        m, at = self.model, at or (lambda _i, x: x)
        graph = graph_for_width(inputs.shape[-1])
        senders, receivers, static = _graph_tensors(graph.size, str(inputs.device))
        nodes, legal = split_input(inputs, graph)
        edges = torch.cat((legal.unsqueeze(-1), static.to(inputs.dtype).expand(len(inputs), -1, -1)), dim=-1)
        h, g = m.node_stem(nodes), m.edge_stem(edges)
        seen = []
        for i, block in enumerate((None, *m.blocks)):
            if block is not None:
                h, g, _ = block(h, g, senders, receivers)
            stacked = torch.cat((h, g), dim=1)
            seen.append(at(i, stacked))
            if seen[-1] is not stacked:  # patched: the streams go on from the patch
                h, g = seen[-1][:, :graph.nodes].contiguous(), seen[-1][:, graph.nodes:].contiguous()
        return seen

    def square_rows(self, prepared: Prepared, point: str) -> torch.Tensor:
        """The node of each real square (nodes are the mover's frame); the edge rows have no square
        of their own (an edge is a move), so a square patch takes the node alone."""
        if board_size(prepared.board) != 8:
            raise ValueError("AlphaGateau's nodes are read per square on 8x8 boards only: a 5x5 board "
                             "has 25 nodes, not 64 squares")
        return torch.as_tensor(_node_of_square(prepared.board), device=self.device)

    def _read(self, prepared: Prepared, residual: torch.Tensor) -> ReadOut:
        nodes = graph_for_width(prepared.inputs.shape[-1]).nodes
        h, g = residual[:, :nodes], residual[:, nodes:]
        value = self.model.value(h)
        legal = prepared.extra["indices"]
        if self.model.training:  # batch norms on the batch's statistics: every edge, as the network runs
            logits = self.model.policy(g)[:, legal]
        else:  # running statistics: the head acts on each edge alone, so the legal edges suffice
            logits = self.model.policy(g[:, legal])
        return ReadOut(logits=logits, score=(value + 1) / 2)

    def unembed(self, prepared: Prepared, residual: torch.Tensor, readout: str) -> ReadOut:
        if readout is not None and readout not in self.readouts:  # None: a stack of several points
            raise ValueError(f"unknown readout point {readout!r}")
        return self._read(prepared, residual)

    def capture_hooks(self, store: list) -> list:
        """``streams``' points from the network's own pass: the two stems' outputs stacked (the node
        stem runs first), then every block's (h, g) stacked, nodes first."""
        m, stem = self.model, {}

        def keep_edges(_m, _a, g):
            store.append(torch.cat((stem.pop("h"), g), dim=1))

        return ([m.node_stem.register_forward_hook(lambda _m, _a, h: stem.__setitem__("h", h)),
                 m.edge_stem.register_forward_hook(keep_edges)]
                + [block.register_forward_hook(lambda _m, _a, out: store.append(torch.cat(out[:2], dim=1)))
                   for block in m.blocks])

    @torch.no_grad()
    def head_writes(self, prepared: Prepared, layer: int):
        """(the head's write (1, N, K): sum_j a_ij (W_h h_j + W_g g_ij), recomputed from the layer's
        attention; the self term W_0 h (N, K) as the bias; the layer's node output (N, K))."""
        gateau, kept = self.layers()[layer], {}

        def keep(module, args, out):
            h, g, senders, receivers = args
            messages = out[2].unsqueeze(-1) * (module.w_h(h)[:, senders] + module.w_g(g))
            kept["write"] = torch.zeros_like(out[0]).index_add(1, receivers, messages)
            kept["own"], kept["out"] = module.w_0(h)[0], out[0][0]
        with hooks(gateau.register_forward_hook(keep)):
            self.streams(prepared.inputs)
        return kept["write"], kept["own"], kept["out"]

    @torch.no_grad()
    def activations(self, prepared: Sequence[Prepared], kind: str, layer: int) -> torch.Tensor:
        """(B, 64, K): block ``layer``'s node write x, every channel on every real square (a1 = 0)."""
        if kind != "channel":
            raise ValueError(NO_MLP if kind == "mlp" else f"{kind!r} units have no activations to read; "
                             "'channel' units do")
        sizes = {board_size(p.board) for p in prepared}
        if sizes != {8}:
            raise ValueError("AlphaGateau's channels are read per square on 8x8 boards only: a 5x5 board "
                             "has 25 nodes, not the 64 squares the neurons panel maps")
        kept = []

        def keep(_m, args, out):
            kept.append(out[0] - args[0])
        with hooks(self.model.blocks[layer].register_forward_hook(keep)):
            self.streams(torch.cat([p.inputs for p in prepared]))
        nodes = torch.stack([torch.as_tensor(_node_of_square(p.board), device=self.device) for p in prepared])
        return kept[0].gather(1, nodes[:, :, None].expand(-1, -1, kept[0].shape[-1]))


def _node_of_square(board: chess.Board):
    """(64,) the node of each real square on an 8x8 board (nodes are the mover's frame)."""
    squares = square_of_node(8, board.turn)  # node -> square
    nodes = squares.copy()
    nodes[squares] = range(64)
    return nodes
