"""The result of a tree search (MCTS, Gumbel MuZero) read off its root: one builder for both.

A move whose subtree is proven reports the proven value and its exact WDL, in the headline
and in its own root line alike: the proof is the game-theoretic value, while the mean over
the move's visits still holds the estimates made before the proof.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from analysis.search.base import (RootMove, SearchResult, game_over_result, mate_moves_from_plies,
                                  terminal_wdl, value_to_score, value_to_wdl)
from analysis.search.tree import Node, principal_variation

WDL = tuple[float, float, float]


@dataclass
class DescentStats:
    """Depths of one run's descents: their mean is the search's depth, the deepest its seldepth."""

    total: int = 0
    count: int = 0
    deepest: int = 0

    def add(self, depth: int) -> None:
        self.total += depth
        self.count += 1
        if depth > self.deepest:
            self.deepest = depth

    def reached(self, depth: int | None) -> bool:
        """Whether a depth budget is met (None: no depth budget)."""
        return depth is not None and self.count > 0 and self.total / self.count >= depth

    @property
    def depth(self) -> int:
        return round(self.total / self.count) if self.count else 0


def edge_value(node: Node, i: int, has_wdl: bool) -> tuple[float, WDL | None] | None:
    """Move ``i``'s value in [-1, 1] for ``node``'s side to move and its WDL (None without a
    WDL head, unless proven); None while the move is unvisited."""
    child = node.children[i]
    if child is not None and child.proven is not None:
        return -child.proven, terminal_wdl(-child.proven)
    n = node.N[i]
    if n <= 0:
        return None
    q = node.W[i] / n
    return q, value_to_wdl(q, node.D[i] / n) if has_wdl else None


def root_moves(root: Node, has_wdl: bool) -> list[RootMove]:
    """Every root move's visits, value, prior and line, most visited first."""
    stats = []
    for i, move in enumerate(root.moves):
        n = int(root.N[i])
        value = edge_value(root, i, has_wdl)
        stats.append(RootMove(move, visits=n, q=value_to_score(value[0]) if value is not None else None,
                              prior=float(root.P[i]), pv=principal_variation(root, i) if n else [move],
                              wdl=value[1] if value is not None else None))
    stats.sort(key=lambda r: (r.visits, r.prior), reverse=True)
    return stats


def tree_result(algo: str, root: Node, chosen: int | None, has_wdl: bool, nodes: int,
                descents: DescentStats, extras: dict[str, Any]) -> SearchResult:
    """The search's answer: move ``chosen`` of ``root`` with its value, WDL, mate distance and
    line, every root move's statistics; the rules' value when the game is over at the root."""
    if not root.expanded:
        return game_over_result(algo, root.proven if root.proven is not None else root.value, nodes, extras)
    value = edge_value(root, chosen, has_wdl)
    if value is None:  # not visited yet: the root's own estimate
        q = root.q()
        value = q, value_to_wdl(q, root.draw) if has_wdl else None
    q, wdl = value
    child = root.children[chosen]
    mate = None
    if child is not None and child.proven is not None and q != 0.0:
        mate = mate_moves_from_plies(int(math.copysign(child.proven_plies + 1, q)))
    return SearchResult(algo, root.moves[chosen], principal_variation(root, chosen), value_to_score(q), wdl,
                        nodes, 0.0, depth=descents.depth, seldepth=descents.deepest, mate=mate,
                        root=root_moves(root, has_wdl), extras=extras)
