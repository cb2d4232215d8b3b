"""Gumbel MuZero search (Danihelka et al., 2022; used by AlphaGateau, its ref. [7]).

Root: Gumbel top-k without replacement, then sequential halving over the
considered actions, scored by g(a) + logits(a) + sigma(completed Q(a)).
Interior nodes: the deterministic rule argmax(pi'(a) - N(a) / (1 + sum N)),
with pi' = softmax(logits + sigma(completed Q)) the improved policy.
sigma is mctx's ``qtransform_completed_by_mix_value``: unvisited actions get the
mixed value, Q is min-max rescaled, then scaled by (maxvisit_init + max N) *
value_scale. Defaults are mctx's: 16 considered actions, value scale 0.1,
maxvisit init 50, Gumbel scale 1.

The visit schedule is mctx's (``get_sequence_of_considered_visits``). mctx
re-ranks the candidates after every single simulation; the paper (Algorithm 2)
ranks them once at the start of each phase and then visits each survivor
equally. We follow the paper, which lets a whole phase's simulations run as
one batch in separate subtrees. The improved policy at the root is exposed in
``extras["improved_policy"]``: it is the self-play training target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator

import chess
import numpy as np

from analysis import search_catalogue as catalogue
from analysis.search.base import Budget, Search, SearchControl, SearchResult
from analysis.search.tree import EvalCache, LeafBatch, Node, TreeEvaluator, backup, undo_virtual, update_proven
from analysis.search.tree_result import DescentStats, tree_result

_TINY = np.finfo(np.float64).tiny
_MIN_LOG_PRIOR = math.log(1e-12)


@dataclass
class GumbelSettings:
    """mctx's defaults; ``simulations`` is used when the budget gives no node count."""

    max_considered_actions: int = 16
    gumbel_scale: float = 1.0
    value_scale: float = 0.1
    maxvisit_init: float = 50.0
    rescale_values: bool = True
    use_mixed_value: bool = True
    simulations: int = 200
    batch_size: int = 32
    policy_temperature: float = 1.0
    cache_size: int = 200_000
    seed: int | None = None

    def __post_init__(self):
        if self.max_considered_actions < 1 or self.simulations < 1 or self.batch_size < 1:
            raise ValueError("max_considered_actions, simulations and batch_size must be >= 1")
        if self.gumbel_scale < 0 or self.value_scale <= 0 or self.maxvisit_init < 0:
            raise ValueError("gumbel_scale >= 0, value_scale > 0 and maxvisit_init >= 0 required")
        if self.policy_temperature <= 0:
            raise ValueError("policy_temperature must be positive")


def considered_visit_sequence(max_considered: int, simulations: int) -> list[int]:
    """mctx's schedule: the visit count an action must have to be chosen at each simulation."""
    if max_considered <= 1:
        return list(range(simulations))
    log2max = math.ceil(math.log2(max_considered))
    sequence: list[int] = []
    visits = [0] * max_considered
    considered = max_considered
    while len(sequence) < simulations:
        extra = max(1, int(simulations / (log2max * considered)))
        for _ in range(extra):
            sequence.extend(visits[:considered])
            for i in range(considered):
                visits[i] += 1
        considered = max(2, considered // 2)
    return sequence[:simulations]


def iter_halving_levels(max_considered: int, simulations: int) -> Iterator[tuple[int, int]]:
    """The same schedule as levels: (actions still considered, how many of them get a visit now)."""
    if max_considered <= 1:
        for _ in range(simulations):
            yield 1, 1
        return
    log2max = math.ceil(math.log2(max_considered))
    used, considered = 0, max_considered
    while used < simulations:
        extra = max(1, int(simulations / (log2max * considered)))
        for _ in range(extra):
            if used >= simulations:
                break
            take = min(considered, simulations - used)
            yield considered, take
            used += take
        considered = max(2, considered // 2)


def halving_levels(max_considered: int, simulations: int) -> list[tuple[int, int]]:
    return list(iter_halving_levels(max_considered, simulations))


class GumbelMuZero(Search):
    spec = catalogue.GUMBEL
    settings_type = GumbelSettings
    default_budget = Budget(nodes=200)

    def __init__(self, evaluator, settings: GumbelSettings | None = None):
        super().__init__(evaluator, settings)
        self._cache = EvalCache(self.settings.cache_size)
        self._rng = np.random.default_rng(self.settings.seed)
        self.root: Node | None = None
        self._gumbel: np.ndarray | None = None
        self._nodes = 0
        self._descents = DescentStats()
        self._tree_eval: TreeEvaluator | None = None

    def reset(self) -> None:
        self._cache.clear()
        self.root = None

    # -- mctx's completed-Q transform -------------------------------------
    def sigma_completed_q(self, node: Node) -> np.ndarray:
        """sigma(completed Q) for the children of ``node``, from its side to move."""
        s = self.settings
        n = node.N
        visited = n > 0
        q = np.where(visited, node.W / np.maximum(n, 1.0), 0.0)
        value = node.value
        if s.use_mixed_value:
            total = float(n.sum())
            probs = np.maximum(node.P, _TINY)
            mass = float(probs[visited].sum())
            weighted = float((probs[visited] * q[visited]).sum() / mass) if mass > 0 else 0.0
            value = (node.value + total * weighted) / (total + 1.0)
        completed = np.where(visited, q, value)
        if s.rescale_values:
            lo, hi = float(completed.min()), float(completed.max())
            completed = (completed - lo) / max(hi - lo, 1e-8)
        return (s.maxvisit_init + float(n.max())) * s.value_scale * completed

    @staticmethod
    def logits(node: Node) -> np.ndarray:
        return np.log(np.maximum(node.P, 1e-12)).clip(min=_MIN_LOG_PRIOR)

    def improved_policy(self, node: Node) -> np.ndarray:
        x = self.logits(node) + self.sigma_completed_q(node)
        x = np.exp(x - x.max())
        return x / x.sum()

    def _interior_select(self, node: Node) -> int:
        n = node.N + node.VL
        return int(np.argmax(self.improved_policy(node) - n / (1.0 + n.sum())))

    def _root_scores(self, root: Node) -> np.ndarray:
        return self._gumbel + self.logits(root) + self.sigma_completed_q(root)

    # -- search -----------------------------------------------------------
    def _run(self, board: chess.Board, control: SearchControl) -> SearchResult:
        s = self.settings
        self._nodes = 0
        self._descents = DescentStats()
        root = Node()
        self.root = root
        te = TreeEvaluator(self.evaluator, self._cache, s.policy_temperature)
        self._tree_eval = te
        batch = LeafBatch()
        if not te.visit_new_leaf(root, board, [], 0, batch, is_root=True):
            te.flush(batch)
        self._nodes = 1
        if not root.expanded:
            return self._make_result(root, None)
        backup([], root, root.value, root.draw, virtual=False)
        k = len(root.moves)
        self._gumbel = s.gumbel_scale * self._rng.gumbel(size=k) if s.gumbel_scale > 0 else np.zeros(k)
        simulations = control.budget.nodes - 1 if control.budget.nodes else s.simulations
        m = min(s.max_considered_actions, k)
        levels = iter_halving_levels(m, simulations)
        # Gumbel top-k: all unvisited, so sigma is constant and g + logits decides.
        considered = list(np.argsort(-(self._gumbel + self.logits(root)), kind="stable")[:m])
        control.publish()
        level = next(levels, None)
        while level is not None:
            if control.should_stop(self._nodes) or self._descents.reached(control.budget.depth):
                break
            width = level[0]
            if width < len(considered):
                scores = self._root_scores(root)
                considered = sorted(considered, key=lambda a: -scores[a])[:width]
            sims: list[int] = []
            while level is not None and level[0] == width:
                take = level[1]
                if sims and len(sims) + take > s.batch_size:
                    break
                if take < len(considered):
                    scores = self._root_scores(root)
                    sims.extend(sorted(considered, key=lambda a: -scores[a])[:take])
                else:
                    sims.extend(considered)
                level = next(levels, None)
            self._simulate(board, root, te, sims)
            control.tick()
        return self._make_result(root, considered)

    def _simulate(self, board: chess.Board, root: Node, te: TreeEvaluator, actions: list[int]) -> None:
        """One simulation per entry of ``actions`` (root moves), evaluated in as few batches as possible."""
        batch = LeafBatch()
        queue = list(actions)
        while queue:
            a = queue[0]
            path = [(root, a)]
            root.VL[a] += 1
            board.push(root.moves[a])
            node = root.children[a]
            if node is None:
                node = root.children[a] = Node()
            while node.expanded and node.proven is None:
                idx = self._interior_select(node)
                node.VL[idx] += 1
                path.append((node, idx))
                board.push(node.moves[idx])
                child = node.children[idx]
                if child is None:
                    child = node.children[idx] = Node()
                node = child
            depth = len(path)
            done = True
            if node.proven is not None:
                backup(path, node, node.proven, 1.0 if node.proven == 0.0 else 0.0)
                update_proven(path)
            elif node.pending:
                # Two simulations reached the same unevaluated leaf: evaluate what we have, retry.
                undo_virtual(path)
                done = False
            elif te.visit_new_leaf(node, board, path, depth, batch):
                value = node.proven if node.proven is not None else node.value
                backup(path, node, value, node.draw)
                if node.proven is not None:
                    update_proven(path)
            for _ in range(depth):
                board.pop()
            if done:
                queue.pop(0)
                self._nodes += 1
                self._descents.add(depth)
            else:
                self._flush(te, batch)
        self._flush(te, batch)

    @staticmethod
    def _flush(te: TreeEvaluator, batch: LeafBatch) -> None:
        for leaf in te.flush(batch):
            backup(leaf.path, leaf.node, leaf.node.value, leaf.node.draw)

    # -- results ----------------------------------------------------------
    def _snapshot(self) -> SearchResult | None:
        root = self.root
        if root is None or not root.expanded or self._gumbel is None:
            return None
        return self._make_result(root, None)

    def _choose(self, root: Node, considered: list[int] | None) -> int:
        """mctx's final action: among the most-visited considered actions, the best score."""
        candidates = considered if considered else list(range(len(root.moves)))
        most = max(root.N[a] for a in candidates)
        scores = self._root_scores(root)
        return max((a for a in candidates if root.N[a] == most), key=lambda a: scores[a])

    def _make_result(self, root: Node, considered: list[int] | None) -> SearchResult:
        extras = {}
        if self._tree_eval is not None:
            extras = {"evaluated": self._tree_eval.evaluated, "batches": self._tree_eval.batches}
        chosen = self._choose(root, considered) if root.expanded else None
        result = tree_result(self.name, root, chosen, self.evaluator.capabilities.wdl, self._nodes,
                             self._descents, extras)
        if root.expanded:
            result.extras["improved_policy"] = dict(zip(root.moves, self.improved_policy(root).tolist()))
            result.extras["completed_q"] = dict(zip(root.moves, self.sigma_completed_q(root).tolist()))
        return result
