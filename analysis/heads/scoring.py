"""Scoring heads against the patterns: attention mass, lift over uniform, labels, static-ness.

For a head, a pattern and a (position, query square) where the pattern has squares, the mass is
the head's attention on those squares and the uniform mass is what a head spreading its
attention evenly over all 64 keys would put there (pattern size / 64). Summed over the sample,
``lift = mass / uniform mass``: 1 for a uniform head, 64/8 = 8 for a pure knight-move head.
More precisely, the uniform head spreads the row's board mass evenly over the squares the head
can attend to at all (``patterns.support``), so a head that is uniform over what it can see has
lift 1 in every family: a graph network (AlphaGateau) attends only along queen and knight moves,
and scored against all 64 squares its untrained heads were all "queen-moves"; ChessBench's rows
also attend to its side-to-move, castling and clock tokens, so their board mass is under 1.
``LabelRule.min_mass`` still counts a share of all of the head's attention.

A head's label is the pattern it favours most, but lift alone would call a pure queen-move head
a rook-move head as well (it puts 14/27 of its mass on the rook's 14 of 27 squares: the same
lift). So among the patterns that pass ``LabelRule`` (lift and mean mass thresholds) the label
is the one with the largest excess mass, mass - uniform mass, which prefers the smaller of two
patterns only when the head really concentrates on it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.heads.patterns import PATTERNS, UNLABELLED


@dataclass(frozen=True)
class LabelRule:
    """When a head earns a label: lift at least ``min_lift`` and, on average, at least
    ``min_mass`` of its attention on the pattern. 1.6 lets a same-colour head (31 of 64
    squares, lift at most 2.06) qualify at 78% of its mass; the mass floor keeps small
    patterns (one square: lift 64 at full mass) from labelling a head that barely leans on them."""

    min_lift: float = 1.6
    min_mass: float = 0.4


@dataclass
class HeadScores:
    """Per head (layers, heads) and pattern: ``mass`` (mean), ``lift``, and per head ``static``
    (share of a map's energy that is the same in every position, 1 = identical maps)."""

    mass: np.ndarray  # (L, H, P)
    lift: np.ndarray  # (L, H, P)
    uniform: np.ndarray  # (L, H, P) mean uniform mass
    static: np.ndarray  # (L, H)
    positions: int

    def labels(self, rule: LabelRule = LabelRule()) -> list[list[str]]:
        passing = (self.lift >= rule.min_lift) & (self.mass >= rule.min_mass)
        excess = np.where(passing, self.mass - self.uniform, -np.inf)
        best = excess.argmax(axis=-1)
        return [[PATTERNS[p] if passing[l, h, p] else UNLABELLED for h, p in enumerate(row)]
                for l, row in enumerate(best)]


class ScoreAccumulator:
    """Sums over positions, one (maps, masks) pair at a time, in the mover's frame."""

    def __init__(self, layers: int, heads: int, reachable: np.ndarray | None = None):
        """``reachable``: (64, 64) mask of the keys each query can attend to (``patterns.support``)."""
        self.shape = (layers, heads)
        self.reachable = np.ones((64, 64), dtype=np.float32) if reachable is None else reachable
        self.reachable_size = self.reachable.sum(axis=1)  # (64 queries,)
        patterns = len(PATTERNS)
        self.mass = np.zeros((layers * heads, patterns))
        self.uniform = np.zeros((layers * heads, patterns))
        self.count = np.zeros(patterns)
        self.sum_maps = np.zeros((layers, heads, 64, 64))
        self.sum_energy = np.zeros((layers, heads, 64))
        self.positions = 0

    def add(self, maps: np.ndarray, masks: np.ndarray) -> None:
        """``maps``: (L, H, 64, 64) rows summing to 1; ``masks``: (P, 64, 64) from ``patterns.masks``."""
        if maps.shape != self.shape + (64, 64):
            raise ValueError(f"attention of shape {maps.shape} does not match {self.shape} x 64 x 64")
        flat = maps.reshape(self.mass.shape[0], 4096).astype(np.float32)
        self.mass += flat @ masks.reshape(len(PATTERNS), 4096).T
        sizes = (masks * self.reachable).sum(axis=2)  # (P, 64 queries): pattern squares the head can reach
        board_mass = flat.reshape(-1, 64, 64).sum(axis=2)  # (L * H, 64 queries): 1 unless other tokens
        self.uniform += board_mass @ (sizes / self.reachable_size).T
        self.count += (sizes > 0).sum(axis=1)
        self.sum_maps += maps
        self.sum_energy += np.square(maps, dtype=np.float64).sum(axis=3)
        self.positions += 1

    def scores(self) -> HeadScores:
        if not self.positions:
            raise ValueError("no positions were scored")
        shape = self.shape + (len(PATTERNS),)
        count = np.maximum(self.count, 1)
        mass = (self.mass / count).reshape(shape)
        uniform = (self.uniform / count).reshape(shape)
        lift = np.where(uniform > 0, mass / np.where(uniform > 0, uniform, 1), 0.0)
        return HeadScores(mass=mass, lift=lift, uniform=uniform, static=self.static(), positions=self.positions)

    def static(self) -> np.ndarray:
        """Mean over query squares of |mean map|^2 / mean |map|^2 (1 when every position's map is the same)."""
        mean = self.sum_maps / self.positions
        energy = self.sum_energy / self.positions
        ratio = np.square(mean).sum(axis=3) / np.maximum(energy, 1e-12)
        return ratio.mean(axis=2)

    def mean_row(self, query: int) -> np.ndarray:
        """(L, H, 64): each head's mean map for one query square (mover's frame)."""
        return self.sum_maps[:, :, query, :] / max(self.positions, 1)
