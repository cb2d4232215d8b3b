"""The AlphaGateau network (Figure 2): linear stems for nodes and edges, ResGATEAU blocks,
the value head on the nodes and the policy head on the edges.

Its input is a graph encoding's batch (``analysis.encoding.graph``); the
batch's width names the board, whose static edge set and edge features the
network fetches for that batch. No weight depends on the board size, so one
network plays 5x5 and 8x8 (the paper's transfer experiment).
"""

from __future__ import annotations

from functools import lru_cache

import torch
from torch import nn

from analysis.encoding.graph import NODE_FEATURES, graph_for_width, split_input
from analysis.encoding.graph_geometry import EDGE_FEATURE_COUNT, BoardGraph, board_graph
from analysis.models.alphagateau.blocks import ResGateau
from analysis.models.alphagateau.config import AlphaGateauConfig
from analysis.models.alphagateau.heads import PolicyHead, ValueHead

FAMILY = "alphagateau"


@lru_cache(maxsize=None)
def _graph_tensors(size: int, device: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(senders, receivers, static edge features) of a board size on ``device``, made once."""
    graph = board_graph(size)
    with torch.inference_mode(False):  # cached: must also serve training after an inference call
        return tuple(torch.tensor(array, device=device) for array in
                     (graph.senders, graph.receivers, graph.static_features))


class AlphaGateau(nn.Module):
    family = FAMILY

    def __init__(self, config: AlphaGateauConfig):
        super().__init__()
        self.config = config
        k = config.width
        self.node_stem = nn.Linear(NODE_FEATURES, k)
        self.edge_stem = nn.Linear(EDGE_FEATURE_COUNT, k)
        self.blocks = nn.ModuleList(ResGateau(k, config.leaky_slope) for _ in range(config.blocks))
        self.value = ValueHead(k, config.leaky_slope)
        self.policy = PolicyHead(k)

    def forward(self, inputs: torch.Tensor, need_attention: bool = False) -> dict[str, torch.Tensor]:
        """inputs (B, N * 119 + E) -> "policy" (B, E) edge logits, "value" (B,) in [-1, 1] for the
        side to move, and with ``need_attention`` "attention" (B, 2L, 1, N, N): row = receiving
        node, column = sending node, in the mover's frame (``attention_maps``)."""
        graph = graph_for_width(inputs.shape[-1])
        senders, receivers, static = _graph_tensors(graph.size, str(inputs.device))
        nodes, legal = split_input(inputs, graph)  # (B, N, 119), (B, E)
        edges = torch.cat((legal.unsqueeze(-1), static.to(inputs.dtype).expand(len(inputs), -1, -1)), dim=-1)
        h, g = self.node_stem(nodes), self.edge_stem(edges)  # (B, N, K), (B, E, K)
        alphas = []
        for block in self.blocks:
            h, g, alpha = block(h, g, senders, receivers)
            alphas.append(alpha)
        out = {"policy": self.policy(g), "value": self.value(h)}
        if need_attention:
            out["attention"] = attention_maps(torch.cat(alphas, dim=1), graph, senders, receivers)
        return out


def attention_maps(alpha: torch.Tensor, graph: BoardGraph, senders: torch.Tensor,
                   receivers: torch.Tensor) -> torch.Tensor:
    """(B, L, E) edge weights -> (B, L, 1, N, N) maps: row i holds what node i hears from each node.

    A row sums to 1 over the squares with an edge into i (parallel
    underpromotion edges add up); every other cell is 0 because no edge
    exists there, not because the network ignored it. GATEAU has one head.
    """
    b, layers, _ = alpha.shape
    n = graph.nodes
    flat = alpha.new_zeros(b, layers, n * n).index_add(2, receivers * n + senders, alpha)
    return flat.view(b, layers, 1, n, n)


def build(config: dict | AlphaGateauConfig) -> AlphaGateau:
    if isinstance(config, dict):
        config = AlphaGateauConfig(**config)
    return AlphaGateau(config)


def parameter_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
