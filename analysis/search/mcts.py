"""PUCT Monte Carlo tree search as in AlphaZero and Lc0.

Leaves are collected in batches with virtual loss so the evaluator sees one
batch per step; evaluations are cached by ``evaluator.cache_key``; the tree is
kept between searches and the subtree of the moves actually played becomes the
next root. Values back up as win - loss with draw probabilities alongside, so
the root reports WDL when the model predicts it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import chess
import numpy as np

from analysis import search_catalogue as catalogue
from analysis.search.base import Budget, Search, SearchControl, SearchResult
from analysis.search.lc0_preset import DEFAULT as DEFAULT_PRESET, LC0, LC0_BATCHING, SIGHTLINE
from analysis.search.lc0_preset import VALUES as PRESET_VALUES
from analysis.search.tree import (EvalCache, LeafBatch, Node, TreeEvaluator, backup, best_child, undo_virtual,
                                  update_proven)
from analysis.search.tree_result import DescentStats, tree_result


@dataclass
class MCTSSettings:
    """lc0's search settings by default (``analysis/search/lc0_preset.py`` cites its source for each).

    ``fpu_reduction``: an unvisited child is valued at the parent's Q minus this
    times the square root of the prior mass already visited (Lc0's "reduction"
    first-play urgency). ``batch_size`` leaves are evaluated per call;
    ``max_collisions`` bounds how many descents may hit a leaf already waiting
    in the batch before the batch is sent early. Dirichlet noise (AlphaZero:
    alpha 0.3, 25 %) is for self-play and stays off for analysis.
    """

    cpuct: float = 1.745
    cpuct_base: float = 38739.0
    cpuct_factor: float = 3.894
    fpu_reduction: float = 0.330
    batch_size: int = 32
    max_collisions: int = 32
    policy_temperature: float = 1.359
    noise: bool = False
    dirichlet_alpha: float = 0.3
    dirichlet_epsilon: float = 0.25
    reuse_tree: bool = True
    stop_when_proven: bool = True
    cache_size: int = 200_000
    seed: int | None = None
    # How lc0 counts (analysis/search/lc0_preset.py): in-flight visits only in U, not as losses in Q;
    # a reused tree's visits count toward the node budget.
    in_flight_as_loss: bool = False
    count_reused_visits: bool = True
    # "lc0" (these defaults: lc0 0.32.1's search rules) or "sightline" (the earlier rules, for the
    # fields left at their lc0 value): analysis/search/lc0_preset.py
    preset: str = DEFAULT_PRESET

    def __post_init__(self):
        if self.preset not in PRESET_VALUES:
            raise ValueError(f"preset must be one of {', '.join(PRESET_VALUES)}, not {self.preset!r}")
        for key, value in PRESET_VALUES[self.preset].items():
            if getattr(self, key) == PRESET_VALUES[DEFAULT_PRESET][key]:
                setattr(self, key, value)
        if self.batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if not (0 < self.cpuct < math.inf and 0 < self.policy_temperature < math.inf):
            raise ValueError("cpuct and policy_temperature must be positive and finite")
        if self.max_collisions < 0 or self.cache_size < 1:
            raise ValueError("max_collisions must be >= 0 and cache_size >= 1")
        if not 0 <= self.dirichlet_epsilon <= 1 or self.dirichlet_alpha <= 0:
            raise ValueError("dirichlet_epsilon must be in [0, 1] and dirichlet_alpha positive")



def lc0_settings(**overrides) -> MCTSSettings:
    """``MCTSSettings`` as lc0 0.32.1 searches with the eigen backend: its rules and its batches of 7."""
    return MCTSSettings(**{"preset": LC0, **LC0_BATCHING, **overrides})


def sightline_settings(**overrides) -> MCTSSettings:
    """``MCTSSettings`` as Sightline's MCTS had them before lc0's rules became the default."""
    return MCTSSettings(**{"preset": SIGHTLINE, **overrides})

class MCTS(Search):
    spec = catalogue.MCTS
    settings_type = MCTSSettings
    default_budget = Budget(nodes=800)

    def __init__(self, evaluator, settings: MCTSSettings | None = None):
        super().__init__(evaluator, settings)
        self._cache = EvalCache(self.settings.cache_size)
        self._rng = np.random.default_rng(self.settings.seed)
        self.root: Node | None = None
        self._root_board: chess.Board | None = None
        self._reset_run_stats()

    def reset(self) -> None:
        self._cache.clear()
        self.root = None
        self._root_board = None

    def _reset_run_stats(self) -> None:
        self._nodes = 0
        self._descents = DescentStats()
        self._tree_eval: TreeEvaluator | None = None

    # -- tree reuse -------------------------------------------------------
    def _find_root(self, board: chess.Board) -> Node:
        old, node = self._root_board, self.root
        if not self.settings.reuse_tree or old is None or node is None:
            return Node()
        n_old = len(old.move_stack)
        stack = board.move_stack
        if len(stack) < n_old or stack[:n_old] != old.move_stack or board.root() != old.root():
            return Node()
        for move in stack[n_old:]:
            idx = node.child_index(move)
            if idx is None or node.children[idx] is None:
                return Node()
            node = node.children[idx]
        if not node.expanded:
            return Node()  # a leaf, or a terminal that was a draw only by its path
        return node

    # -- search -----------------------------------------------------------
    def _run(self, board: chess.Board, control: SearchControl) -> SearchResult:
        try:
            return self._search(board, control)
        except BaseException:
            # A failed evaluator call leaves leaves marked pending (and virtual losses) that
            # no batch will ever resolve; a reused tree would then collide on them forever.
            self.root, self._root_board = None, None
            raise

    def _search(self, board: chess.Board, control: SearchControl) -> SearchResult:
        self._reset_run_stats()
        s = self.settings
        root = self._find_root(board)
        self.root, self._root_board = root, board.copy()
        te = TreeEvaluator(self.evaluator, self._cache, s.policy_temperature)
        self._tree_eval = te
        if not root.expanded and root.proven is None:
            batch = LeafBatch()
            if not te.visit_new_leaf(root, board, [], 0, batch, is_root=True):
                te.flush(batch)
            if root.proven is None:
                backup([], root, root.value, root.draw, virtual=False)
            self._nodes += 1
        if not root.expanded:
            return self._make_result(root)
        if s.count_reused_visits:
            self._nodes = max(self._nodes, root.visits)
        if s.noise:
            self._apply_noise(root)
        control.publish()
        budget = control.budget
        while True:
            if control.should_stop(self._nodes):
                break
            if s.stop_when_proven and root.proven is not None:
                break
            if self._descents.reached(budget.depth):
                break
            room = s.batch_size if budget.nodes is None else min(s.batch_size, budget.nodes - self._nodes)
            self._nodes += self._step(board, root, te, room)
            control.tick()
        return self._make_result(root)

    def _apply_noise(self, root: Node) -> None:
        if root.raw_priors is None:
            root.raw_priors = root.P.copy()
        noise = self._rng.dirichlet([self.settings.dirichlet_alpha] * len(root.moves))
        eps = self.settings.dirichlet_epsilon
        root.P = (1 - eps) * root.raw_priors + eps * noise

    def _select(self, node: Node) -> int:
        s = self.settings
        n = node.N + node.VL
        total = float(n.sum())
        c = s.cpuct + s.cpuct_factor * math.log((total + s.cpuct_base) / s.cpuct_base)
        if s.in_flight_as_loss:
            visited = n > 0
            q_visited = (node.W - node.VL) / np.maximum(n, 1.0)
        else:
            visited = node.N > 0
            q_visited = node.W / np.maximum(node.N, 1.0)
        fpu = node.q() - s.fpu_reduction * math.sqrt(float(node.P[visited].sum()))
        q = np.where(visited, q_visited, fpu)
        u = c * node.P * (math.sqrt(total) if total > 0 else 1.0) / (1.0 + n)
        return int(np.argmax(q + u))

    def _step(self, board: chess.Board, root: Node, te: TreeEvaluator, room: int) -> int:
        """Collect up to ``room`` playouts, evaluate the new leaves in one call, back up."""
        batch = LeafBatch()
        completed = 0
        collisions = 0
        stop_when_proven = self.settings.stop_when_proven
        while len(batch) + completed < room and collisions <= self.settings.max_collisions:
            node = root
            path = []
            while node.expanded and node.proven is None:
                idx = self._select(node)
                node.VL[idx] += 1
                path.append((node, idx))
                board.push(node.moves[idx])
                child = node.children[idx]
                if child is None:
                    child = node.children[idx] = Node()
                node = child
            depth = len(path)
            if node.proven is not None:
                backup(path, node, node.proven, 1.0 if node.proven == 0.0 else 0.0)
                update_proven(path)
                completed += 1
            elif node.pending:
                undo_virtual(path)
                collisions += 1
            elif te.visit_new_leaf(node, board, path, depth, batch):
                if node.proven is not None:
                    backup(path, node, node.proven, node.draw)
                    update_proven(path)
                else:
                    backup(path, node, node.value, node.draw)
                completed += 1
            for _ in range(depth):
                board.pop()
            self._descents.add(depth)
            if stop_when_proven and root.proven is not None:
                break
        for leaf in te.flush(batch):
            backup(leaf.path, leaf.node, leaf.node.value, leaf.node.draw)
            completed += 1
        return completed

    # -- results ----------------------------------------------------------
    def _snapshot(self) -> SearchResult | None:
        root = self.root
        if root is None or not root.expanded:
            return None
        return self._make_result(root)

    def _make_result(self, root: Node) -> SearchResult:
        extras = {}
        if self._tree_eval is not None:
            extras = {"evaluated": self._tree_eval.evaluated, "batches": self._tree_eval.batches,
                      "cache_hits": self._tree_eval.cache.hits, "tree_visits": root.visits}
        return tree_result(self.name, root, best_child(root), self.evaluator.capabilities.wdl, self._nodes,
                           self._descents, extras)
