"""The GATEAU layer (Rigaux & Kashima, eqs. 4-6) and the segment softmax it needs.

Graphs in a batch share one static edge set (``senders``, ``receivers``), so
a batch is dense (B, N, K) nodes and (B, E, K') edges and every per-edge sum is
one ``index_add_`` / ``scatter_reduce`` along dim 1: no loop over edges.

For an edge from sender j to receiver i (the paper's g_ij, j in N_i):

    g'_ij  = W_u h_i + W_e g_ij + W_v h_j                          (4)
    a_ij   = softmax over i's incoming edges of LeakyReLU(a . g'_ij) (5)
    h'_i   = W_0 h_i + sum_j a_ij (W_h h_j + W_g g_ij)              (6)

and the layer returns (h', g'). Where the public code differs we follow the
paper: its message is W_h h_j + g'_ij (the updated edge, no W_g), ours is
W_h h_j + W_g g_ij with the incoming edge features as eq. 6 writes; its Dense
layers carry biases, the paper's W have none (a bias before a BatchNorm, which
every GATEAU output meets next, is redundant anyway).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def segment_softmax(logits: torch.Tensor, segments: torch.Tensor, count: int) -> torch.Tensor:
    """Softmax of (B, E) ``logits`` within each segment (E,) in 0..count-1; every segment sums to 1."""
    index = segments.expand_as(logits)
    peak = logits.new_full((logits.shape[0], count), float("-inf"))
    peak = peak.scatter_reduce(1, index, logits, reduce="amax", include_self=True)
    weights = torch.exp(logits - peak.gather(1, index))
    total = weights.new_zeros((logits.shape[0], count)).scatter_add(1, index, weights)
    return weights / total.gather(1, index)


class Gateau(nn.Module):
    """One GATEAU layer, a single attention head as in the paper."""

    def __init__(self, width: int, leaky_slope: float = 0.01):
        super().__init__()
        self.w_u = nn.Linear(width, width, bias=False)  # receiver -> edge
        self.w_v = nn.Linear(width, width, bias=False)  # sender -> edge
        self.w_e = nn.Linear(width, width, bias=False)  # edge -> edge
        self.a = nn.Linear(width, 1, bias=False)  # attention logit
        self.w_0 = nn.Linear(width, width, bias=False)  # self term
        self.w_h = nn.Linear(width, width, bias=False)  # sender -> message
        self.w_g = nn.Linear(width, width, bias=False)  # edge -> message
        self.leaky_slope = leaky_slope

    def forward(self, h: torch.Tensor, g: torch.Tensor, senders: torch.Tensor,
                receivers: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """h (B, N, K), g (B, E, K), senders/receivers (E,) -> h' (B, N, K), g' (B, E, K), attention (B, E)."""
        nodes = h.shape[1]
        # Project on the N nodes, then gather onto the E edges (cheaper than projecting E copies).
        g_new = self.w_u(h)[:, receivers] + self.w_e(g) + self.w_v(h)[:, senders]  # (B, E, K)   eq. 4
        logits = F.leaky_relu(self.a(g_new).squeeze(-1), self.leaky_slope)  # (B, E)
        alpha = segment_softmax(logits.float(), receivers, nodes).to(h.dtype)  # (B, E)             eq. 5
        messages = alpha.unsqueeze(-1) * (self.w_h(h)[:, senders] + self.w_g(g))  # (B, E, K)
        h_new = self.w_0(h).index_add(1, receivers, messages)  # (B, N, K)                          eq. 6
        return h_new, g_new, alpha
