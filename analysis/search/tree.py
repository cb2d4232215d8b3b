"""The search tree shared by MCTS and Gumbel MuZero, and its batched leaf evaluation.

Edge statistics live on the parent in numpy arrays (visits, value sums, draw
sums, in-flight visits), all from the parent's side to move: a child's value
is negated on the way up (negamax). Values are in [-1, 1] (win - loss).
Terminal nodes carry their exact value, and a small solver marks nodes whose
game-theoretic value is proven (a move that mates, or every move lost).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Hashable

import chess
import numpy as np

from analysis.evaluator import Evaluation, Evaluator
from analysis.search.base import evaluation_value, terminal_value


class Node:
    """One position in the tree. Unexpanded until its evaluation arrives."""

    __slots__ = ("moves", "P", "N", "W", "D", "VL", "children", "value", "draw", "visits",
                 "wsum", "dsum", "proven", "proven_plies", "pending", "raw_priors")

    def __init__(self):
        self.moves: list[chess.Move] | None = None
        self.P: np.ndarray | None = None
        self.N: np.ndarray | None = None
        self.W: np.ndarray | None = None
        self.D: np.ndarray | None = None
        self.VL: np.ndarray | None = None
        self.children: list[Node | None] | None = None
        self.value = 0.0          # the evaluator's value for this node's side to move
        self.draw = 0.0           # its draw probability (0 when unknown)
        self.visits = 0           # completed visits through this node, its own evaluation included
        self.wsum = 0.0           # sum of backed-up values, this node's side to move
        self.dsum = 0.0
        self.proven: float | None = None  # exact value when the game-theoretic result is known
        self.proven_plies = 0     # distance in plies to the end of the game when proven
        self.pending = False      # waiting in the current batch for its evaluation
        self.raw_priors: np.ndarray | None = None  # priors before root noise

    @property
    def expanded(self) -> bool:
        return self.moves is not None

    def expand(self, moves: list[chess.Move], policy: dict[chess.Move, float], value: float,
               draw: float) -> None:
        k = len(moves)
        priors = np.fromiter((policy.get(m, 0.0) for m in moves), dtype=np.float64, count=k)
        total = priors.sum()
        priors = priors / total if total > 0 else np.full(k, 1.0 / k)
        self.moves = moves
        self.P = priors
        self.N = np.zeros(k, dtype=np.float64)
        self.W = np.zeros(k, dtype=np.float64)
        self.D = np.zeros(k, dtype=np.float64)
        self.VL = np.zeros(k, dtype=np.float64)
        self.children = [None] * k
        self.value = value
        self.draw = draw

    def set_terminal(self, value: float) -> None:
        self.proven = value
        self.proven_plies = 0
        self.value = value
        self.draw = 1.0 if value == 0.0 else 0.0

    def q(self) -> float:
        """Mean value for this node's side to move."""
        return self.wsum / self.visits if self.visits else self.value

    def child_index(self, move: chess.Move) -> int | None:
        if self.moves is None:
            return None
        try:
            return self.moves.index(move)
        except ValueError:
            return None


Path = list[tuple[Node, int]]


def backup(path: Path, leaf: Node, value: float, draw: float, virtual: bool = True) -> None:
    """Add one visit of value ``value`` (leaf's side to move) along ``path``; undo virtual loss."""
    leaf.visits += 1
    leaf.wsum += value
    leaf.dsum += draw
    v = value
    for node, idx in reversed(path):
        v = -v
        node.N[idx] += 1
        node.W[idx] += v
        node.D[idx] += draw
        if virtual:
            node.VL[idx] -= 1
        node.visits += 1
        node.wsum += v
        node.dsum += draw


def undo_virtual(path: Path) -> None:
    for node, idx in path:
        node.VL[idx] -= 1


def update_proven(path: Path) -> None:
    """MCTS-solver step: after a child became proven, see whether its parents are proven too."""
    for node, idx in reversed(path):
        child = node.children[idx]
        if child is None or child.proven is None:
            return
        if child.proven == -1.0:  # this move mates (or wins by force): the node is won
            plies = min(c.proven_plies for c in node.children
                        if c is not None and c.proven == -1.0) + 1
            if node.proven == 1.0 and node.proven_plies <= plies:
                return
            node.proven, node.proven_plies = 1.0, plies
            continue
        if any(c is None or c.proven is None for c in node.children):
            return
        best = max(-c.proven for c in node.children)
        plies = max(c.proven_plies for c in node.children if -c.proven == best) + 1
        node.proven, node.proven_plies = best, plies


class EvalCache:
    """Evaluations keyed by ``evaluator.cache_key`` (what the network sees), least recently used out."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._data: OrderedDict[Hashable, Evaluation] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable) -> Evaluation | None:
        ev = self._data.get(key)
        if ev is None:
            self.misses += 1
            return None
        self._data.move_to_end(key)
        self.hits += 1
        return ev

    def put(self, key: Hashable, ev: Evaluation) -> None:
        self._data[key] = ev
        if len(self._data) > self.capacity:
            self._data.popitem(last=False)

    def clear(self) -> None:
        self._data.clear()

    def __len__(self) -> int:
        return len(self._data)


@dataclass
class PendingLeaf:
    path: Path
    node: Node
    board: chess.Board
    key: Hashable
    depth: int


@dataclass
class LeafBatch:
    """Leaves waiting for one evaluator call; duplicates of one key are evaluated once."""

    leaves: list[PendingLeaf] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.leaves)


class TreeEvaluator:
    """Turns new leaves into expanded nodes: terminal check, cache lookup, batched evaluation."""

    def __init__(self, evaluator: Evaluator, cache: EvalCache, temperature: float = 1.0):
        self.evaluator = evaluator
        self.cache = cache
        self.temperature = temperature
        self.evaluated = 0      # positions sent to the evaluator
        self.batches = 0

    def visit_new_leaf(self, node: Node, board: chess.Board, path: Path, depth: int,
                       batch: LeafBatch, is_root: bool = False) -> bool:
        """Resolve a new leaf now (terminal or cached: True) or queue it in ``batch`` (False)."""
        has_moves = any(board.generate_legal_moves())
        # At the root only mate and stalemate end the search: a position met once before (a
        # draw inside the tree) is where the game stands, and the search must still name a move.
        value = terminal_value(board, has_moves) if not (is_root and has_moves) else None
        if value is not None:
            node.set_terminal(value)
            return True
        key = self.evaluator.cache_key(board)
        ev = self.cache.get(key)
        if ev is not None:
            self._expand(node, board, ev, fresh=False)
            return True
        node.pending = True
        batch.leaves.append(PendingLeaf(path, node, board.copy(), key, depth))
        return False

    def flush(self, batch: LeafBatch) -> list[PendingLeaf]:
        """Evaluate the batch in one call and expand its nodes; returns the leaves to back up."""
        if not batch.leaves:
            return []
        unique: dict[Hashable, int] = {}
        boards = []
        for leaf in batch.leaves:
            if leaf.key not in unique:
                unique[leaf.key] = len(boards)
                boards.append(leaf.board)
        evals = self.evaluator.evaluate(boards, temperature=self.temperature)
        self.evaluated += len(boards)
        self.batches += 1
        for key, i in unique.items():
            self.cache.put(key, evals[i])
        for leaf in batch.leaves:
            leaf.node.pending = False
            self._expand(leaf.node, leaf.board, evals[unique[leaf.key]], fresh=True)
        done = batch.leaves
        batch.leaves = []
        return done

    def _expand(self, node: Node, board: chess.Board, ev: Evaluation, fresh: bool) -> None:
        v, d = evaluation_value(ev)
        # A fresh evaluation's policy lists exactly this board's legal moves. A cached one
        # may come from a board the evaluator cannot tell apart (e.g. material ignores
        # castling rights), so its moves are re-derived from the board itself.
        moves = list(ev.policy) if fresh and ev.policy else list(board.legal_moves)
        node.expand(moves, ev.policy, v, 0.0 if math.isnan(d) else d)


def best_child(node: Node) -> int | None:
    """The move to play: a proven win (shortest first), else most visits, ties by Q then prior.

    Proven losses are only chosen when every move loses.
    """
    if not node.expanded or not node.moves:
        return None
    children = node.children
    wins = [i for i, c in enumerate(children) if c is not None and c.proven == -1.0]
    if wins:
        return min(wins, key=lambda i: children[i].proven_plies)
    q = np.where(node.N > 0, node.W / np.maximum(node.N, 1), -2.0)
    key = node.N * 4.0 + q + 1e-6 * node.P
    losing = [i for i, c in enumerate(children) if c is not None and c.proven == 1.0]
    if losing and len(losing) < len(children):
        key = key.copy()
        key[losing] = -np.inf
    return int(np.argmax(key))


def principal_variation(root: Node, first: int | None = None, limit: int = 64) -> list[chess.Move]:
    """The line of best children from ``root`` (starting with child ``first`` when given)."""
    pv: list[chess.Move] = []
    node = root
    idx = first
    while node is not None and node.expanded and node.moves and len(pv) < limit:
        if idx is None:
            idx = best_child(node)
            if idx is None:
                break
            child = node.children[idx]
            if node.N[idx] <= 0 and (child is None or child.proven != -1.0):
                break
        pv.append(node.moves[idx])
        node = node.children[idx]
        idx = None
    return pv
