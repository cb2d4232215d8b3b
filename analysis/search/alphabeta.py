"""Depth-limited alpha-beta: the baseline of the Giraffe comparison.

Iterative deepening, negamax alpha-beta with principal-variation search, a
transposition table, quiescence search on captures (and check evasions), and
move ordering by the network's policy when the evaluator has one (otherwise
MVV-LVA captures, killers and history). On network evaluators the successors
of a node are evaluated in one batch before its moves are searched.

``AlphaBetaCore`` holds everything but the search boundary, so the
probability-limited search (``probability.py``) differs only in how a node's
"remaining budget" is split among its children and when it runs out.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from dataclasses import dataclass, replace
from typing import Hashable, Iterator

import chess

from analysis import search_catalogue as catalogue
from analysis.evaluator import Evaluator
from analysis.material import CAPTURER_VALUES
from analysis.search.base import (Budget, RootMove, Search, SearchControl, SearchResult, StopSearch,
                                  draw_by_rule, evaluation_value, game_over_result, mate_moves_from_plies,
                                  position_key, terminal_value, terminal_wdl, value_to_score)

MATE = 10.0          # values beyond MATE - 1 are mates; the distance is coded in the fraction
MATE_STEP = 0.001    # one ply of mate distance
INF = 100.0
NULL_WINDOW = 1e-7
EXACT, LOWER, UPPER = 0, 1, 2
_CHECK_EVERY = 64    # nodes between clock checks and progress ticks


def is_mate_value(v: float) -> bool:
    return abs(v) > MATE - 1.0


def mate_plies(v: float) -> int:
    """Signed plies to mate from the root (positive: the side to move mates)."""
    plies = int(round((MATE - abs(v)) / MATE_STEP))
    return plies if v > 0 else -plies


def _to_tt(v: float, ply: int) -> float:
    if v > MATE - 1.0:
        return v + ply * MATE_STEP
    if v < -(MATE - 1.0):
        return v - ply * MATE_STEP
    return v


def _from_tt(v: float, ply: int) -> float:
    if v > MATE - 1.0:
        return v - ply * MATE_STEP
    if v < -(MATE - 1.0):
        return v + ply * MATE_STEP
    return v


@dataclass
class AlphaBetaSettings:
    """``batch_successors``: None means on unless the evaluator answers one position as cheaply
    (it has ``value_only``: the material count, a compiled CPU kernel)."""

    max_depth: int = 64
    max_qdepth: int = 16
    policy_ordering: bool = True
    batch_successors: bool | None = None
    tt_size: int = 2_000_000
    cache_size: int = 1_000_000

    def __post_init__(self):
        if self.max_depth < 1 or self.max_qdepth < 0 or self.tt_size < 1 or self.cache_size < 1:
            raise ValueError("max_depth, tt_size, cache_size must be >= 1 and max_qdepth >= 0")


class AlphaBetaCore(Search):
    """Negamax alpha-beta with TT and quiescence; subclasses define the search boundary."""

    def __init__(self, evaluator: Evaluator, settings=None):
        super().__init__(evaluator, settings)
        self._tt: dict[Hashable, tuple[float, float, int, chess.Move | None]] = {}
        self._cache: dict[Hashable, tuple[float, dict | None]] = {}  # policy None: not asked for yet
        # An evaluator with ``value_only`` is asked for values alone where no policy is needed
        # (quiescence), and gains nothing from batching successors.
        self._value_only = evaluator.value_only
        batch = self.settings.batch_successors
        self._batch = self._value_only is None if batch is None else batch
        self._use_policy = self.settings.policy_ordering and evaluator.capabilities.policy
        self._reset_run()

    def reset(self) -> None:
        self._tt.clear()
        self._cache.clear()

    def _reset_run(self) -> None:
        self._nodes = 0
        self._node_limit = None
        self._seldepth = 0
        self._branch_depth = 0
        self._killers: dict[int, list[chess.Move]] = {}
        self._history: dict[tuple[int, int], float] = {}
        self._best: SearchResult | None = None
        self._control: SearchControl | None = None
        self._protected = True
        self._evaluated = 0
        self._batches = 0

    # -- the boundary (subclasses) -----------------------------------------
    @abstractmethod
    def _iterations(self, budget: Budget) -> Iterator[tuple[int, float]]:
        """(iteration number, the root's remaining budget) for iterative deepening."""

    @abstractmethod
    def _is_horizon(self, r: float) -> bool:
        """Whether a node with remaining budget ``r`` (depth or log-probability) is a leaf."""

    @abstractmethod
    def _child_budgets(self, board: chess.Board, moves: list[chess.Move], r: float,
                       policy: dict[chess.Move, float], hash_move: chess.Move | None = None) -> list[float]:
        """The remaining budget of each child of a node with budget ``r`` (``hash_move``: the
        transposition table's best move here, if any)."""

    def _iteration_extras(self, iteration: int, r: float) -> dict:
        return {}

    # -- evaluation ---------------------------------------------------------
    def _evaluation(self, board: chess.Board) -> tuple[float, dict]:
        key = self.evaluator.cache_key(board)
        hit = self._cache.get(key)
        if hit is not None and hit[1] is not None:
            return hit
        ev = self.evaluator.evaluate([board])[0]
        self._evaluated += 1
        self._batches += 1
        return self._store(key, ev)

    def _static_value(self, board: chess.Board) -> float:
        """The evaluator's value of ``board``, without its policy where the evaluator can skip it."""
        if self._value_only is None:
            return self._evaluation(board)[0]
        key = self.evaluator.cache_key(board)
        hit = self._cache.get(key)
        if hit is not None:
            return hit[0]
        self._evaluated += 1
        self._batches += 1
        return self._put(key, self._value_only(board), None)[0]

    def _store(self, key: Hashable, ev) -> tuple[float, dict]:
        v, _ = evaluation_value(ev)
        return self._put(key, v, ev.policy if self._use_policy else {})

    def _put(self, key: Hashable, v: float, policy: dict | None) -> tuple[float, dict | None]:
        """Cache (value, policy); policy None: not asked for yet."""
        # Static values stay strictly inside (-1, 1) so they never read as mates.
        entry = (max(-0.999, min(0.999, v)), policy)
        if len(self._cache) >= self.settings.cache_size:
            self._cache.clear()
        self._cache[key] = entry
        return entry

    def _prefetch(self, board: chess.Board, moves: list[chess.Move]) -> None:
        """Evaluate the successors not yet cached in one evaluator call."""
        keys, boards = [], []
        seen = set()
        for move in moves:
            board.push(move)
            key = self.evaluator.cache_key(board)
            if key not in self._cache and key not in seen:
                seen.add(key)
                keys.append(key)
                boards.append(board.copy())
            board.pop()
        if len(boards) > 1:
            for key, ev in zip(keys, self.evaluator.evaluate(boards)):
                self._store(key, ev)
            self._evaluated += len(boards)
            self._batches += 1

    # -- node bookkeeping -----------------------------------------------------
    def _count(self, ply: int) -> None:
        self._nodes += 1
        if ply > self._seldepth:
            self._seldepth = ply
        if self._node_limit is not None and self._nodes >= self._node_limit and not self._protected:
            raise StopSearch
        control = self._control
        if control.stop_requested():  # every node: with a network, 64 nodes are a long wait
            raise StopSearch
        if self._nodes % _CHECK_EVERY == 0:
            if not self._protected and control.out_of_time():
                raise StopSearch
            control.tick()

    # -- move ordering ----------------------------------------------------------
    def _order(self, board: chess.Board, moves: list[chess.Move], tt_move: chess.Move | None,
               ply: int, policy: dict[chess.Move, float]) -> list[chess.Move]:
        if policy:
            key = lambda m: policy.get(m, 0.0)  # noqa: E731
        else:
            killers = self._killers.get(ply, ())
            history = self._history

            def key(m: chess.Move) -> float:
                victim = board.piece_type_at(m.to_square)
                if victim is None and board.is_en_passant(m):
                    victim = chess.PAWN
                if victim is not None:
                    return 1000.0 + 10 * CAPTURER_VALUES[victim] - CAPTURER_VALUES[board.piece_type_at(m.from_square)]
                if m.promotion == chess.QUEEN:
                    return 900.0
                if m in killers:
                    return 500.0
                return history.get((m.from_square, m.to_square), 0.0) / (1.0 + len(history))
        ordered = sorted(moves, key=key, reverse=True)
        if tt_move is not None and tt_move in moves:
            ordered.remove(tt_move)
            ordered.insert(0, tt_move)
        return ordered

    def _note_cutoff(self, board: chess.Board, move: chess.Move, ply: int) -> None:
        if board.is_capture(move):
            return
        killers = self._killers.setdefault(ply, [])
        if move not in killers:
            killers.insert(0, move)
            del killers[2:]
        k = (move.from_square, move.to_square)
        self._history[k] = self._history.get(k, 0.0) + 1.0

    # -- search -------------------------------------------------------------------
    def _negamax(self, board: chess.Board, r: float, alpha: float, beta: float,
                 ply: int) -> tuple[float, list[chess.Move]]:
        self._count(ply)
        if ply > self._branch_depth:
            self._branch_depth = ply
        if draw_by_rule(board):
            return 0.0, []
        if self._is_horizon(r):
            return self._quiesce(board, alpha, beta, ply, 0), []
        key = position_key(board)
        entry = self._tt.get(key)
        tt_move = None
        if entry is not None:
            e_r, e_v, e_flag, tt_move = entry
            if e_r >= r - 1e-9:
                v = _from_tt(e_v, ply)
                if e_flag == EXACT or (e_flag == LOWER and v >= beta) or (e_flag == UPPER and v <= alpha):
                    return v, ([tt_move] if tt_move is not None and e_flag != UPPER else [])
        moves = list(board.legal_moves)
        if not moves:
            return (-MATE + ply * MATE_STEP if board.is_check() else 0.0), []
        if self._batch:
            self._prefetch(board, moves)
        policy = self._evaluation(board)[1] if self._use_policy else {}
        budgets = dict(zip(moves, self._child_budgets(board, moves, r, policy, tt_move)))
        alpha0 = alpha
        best, best_move, best_pv = -INF, None, []
        for i, move in enumerate(self._order(board, moves, tt_move, ply, policy)):
            cr = budgets[move]
            board.push(move)
            try:
                if i == 0:
                    v, pv = self._negamax(board, cr, -beta, -alpha, ply + 1)
                    v = -v
                else:
                    v, pv = self._negamax(board, cr, -alpha - NULL_WINDOW, -alpha, ply + 1)
                    v = -v
                    if alpha < v < beta:
                        v, pv = self._negamax(board, cr, -beta, -alpha, ply + 1)
                        v = -v
            finally:
                board.pop()
            if v > best:
                best, best_move, best_pv = v, move, [move] + pv
                if v > alpha:
                    alpha = v
                    if alpha >= beta:
                        self._note_cutoff(board, move, ply)
                        break
        flag = UPPER if best <= alpha0 else (LOWER if best >= beta else EXACT)
        if len(self._tt) >= self.settings.tt_size:
            self._tt.clear()
        self._tt[key] = (r, _to_tt(best, ply), flag, best_move)
        return best, best_pv

    def _quiesce(self, board: chess.Board, alpha: float, beta: float, ply: int, qdepth: int) -> float:
        self._count(ply)
        if board.is_check():
            moves = list(board.legal_moves)
            if not moves:
                return -MATE + ply * MATE_STEP
            if qdepth >= self.settings.max_qdepth:
                return self._static_value(board)
            best = -INF
        else:
            stand = self._static_value(board)
            if stand >= beta or qdepth >= self.settings.max_qdepth:
                return stand
            alpha = max(alpha, stand)
            best = stand
            moves = _captures_and_queen_promotions(board)
            if not moves:
                return stand
        moves = self._order(board, moves, None, ply, {})
        if self._batch and len(moves) > 1:
            self._prefetch(board, moves)
        for move in moves:
            board.push(move)
            try:
                v = -self._quiesce(board, -beta, -alpha, ply + 1, qdepth + 1)
            finally:
                board.pop()
            if v > best:
                best = v
                if v > alpha:
                    alpha = v
                    if alpha >= beta:
                        break
        return best

    def _run(self, board: chess.Board, control: SearchControl) -> SearchResult:
        self._reset_run()
        self._control = control
        self._node_limit = control.budget.nodes
        moves = list(board.legal_moves)
        if not moves:
            return game_over_result(self.name, terminal_value(board, has_moves=False), 1)
        static, policy = self._evaluation(board)
        order = self._order(board, moves, None, 0, policy)
        # Until an iteration completes, the best guess is the ordering's first move.
        self._best = self._make_result(order[0], [order[0]], static, {}, {}, 0, {})
        control.publish()
        branch_depths: dict[chess.Move, int] = {}
        for iteration, r in self._iterations(control.budget):
            try:
                value, pv, scores = self._root_search(board, order, r, policy, branch_depths)
            except StopSearch:
                break
            finally:
                self._protected = False
            order = sorted(order, key=lambda m: (scores[m][1] == "exact", scores[m][0]), reverse=True)
            self._best = self._make_result(pv[0], pv, value, scores, branch_depths, iteration,
                                           self._iteration_extras(iteration, r))
            control.publish()
            if is_mate_value(value) and control.budget.depth is None:
                break  # a forced mate (or loss) is proven: deeper iterations cannot change it
            if control.should_stop(self._nodes):
                break
        return replace(self._best, nodes=self._nodes, seldepth=self._seldepth,
                       extras={**self._best.extras, "evaluated": self._evaluated,
                               "batches": self._batches})

    def _root_search(self, board, order, r, policy, branch_depths):
        moves = list(order)
        # The last iteration's best move plays the hash move's part at the root.
        hash_move = order[0] if self._best is not None and self._best.depth else None
        budgets = dict(zip(moves, self._child_budgets(board, moves, r, policy, hash_move)))
        if self._batch:
            self._prefetch(board, moves)
        alpha, beta = -INF, INF
        best, best_pv = -INF, []
        scores: dict[chess.Move, tuple[float, str]] = {}
        for i, move in enumerate(moves):
            self._branch_depth = 0
            board.push(move)
            try:
                if i == 0:
                    v, pv = self._negamax(board, budgets[move], -beta, -alpha, 1)
                    v = -v
                else:
                    v, pv = self._negamax(board, budgets[move], -alpha - NULL_WINDOW, -alpha, 1)
                    v = -v
                    if v > alpha:
                        v, pv = self._negamax(board, budgets[move], -beta, -alpha, 1)
                        v = -v
            finally:
                board.pop()
                branch_depths[move] = max(branch_depths.get(move, 0), self._branch_depth)
            if v > best:
                best, best_pv = v, [move] + pv
                alpha = max(alpha, v)
                scores[move] = (v, "exact")
                if i > 0:
                    # A new best move inside an unfinished iteration beats the last one's answer.
                    self._best = self._make_result(move, best_pv, v, dict(scores), branch_depths,
                                                   self._best.depth, self._best.extras)
            else:
                scores[move] = (v, "upper")
        return best, best_pv, scores

    # -- results ------------------------------------------------------------------
    def _make_result(self, move, pv, value, scores, branch_depths, depth, extras) -> SearchResult:
        mate = None
        if is_mate_value(value):
            mate = mate_moves_from_plies(mate_plies(value))
            score = 1.0 if value > 0 else 0.0
            wdl = terminal_wdl(1.0 if value > 0 else -1.0)
        else:
            score, wdl = value_to_score(value), None
        root = []
        for m, (v, bound) in scores.items():
            s = 1.0 if v > MATE - 1 else (0.0 if v < -(MATE - 1) else value_to_score(v))
            root.append(RootMove(m, score=s, bound=bound, depth=branch_depths.get(m)))
        root.sort(key=lambda x: (x.bound == "exact", x.score), reverse=True)
        return SearchResult(self.name, move, list(pv), score, wdl, self._nodes, 0.0, depth=depth,
                            seldepth=self._seldepth, mate=mate, root=root, extras=dict(extras))

    def _snapshot(self) -> SearchResult | None:
        if self._best is None:
            return None
        return replace(self._best, nodes=self._nodes, seldepth=self._seldepth,
                       elapsed_s=self._control.elapsed() if self._control else 0.0)


class AlphaBeta(AlphaBetaCore):
    """Depth-limited iterative deepening (the budget's depth, else ``max_depth`` plies)."""

    spec = catalogue.ALPHABETA
    settings_type = AlphaBetaSettings
    default_budget = Budget(nodes=20_000)

    def _iterations(self, budget: Budget) -> Iterator[tuple[int, float]]:
        last = min(budget.depth or self.settings.max_depth, self.settings.max_depth)
        for depth in range(1, last + 1):
            yield depth, float(depth)

    def _is_horizon(self, r: float) -> bool:
        return r <= 0

    def _child_budgets(self, board, moves, r, policy, hash_move=None) -> list[float]:
        return [r - 1.0] * len(moves)


def _captures_and_queen_promotions(board: chess.Board) -> list[chess.Move]:
    """Quiescence's moves: every capture (en passant included) and the quiet queen promotions.

    Asked of python-chess by target squares rather than filtered from every legal move (most of
    a quiescence node's time); in the order that filtering gave, up to moves the ordering's
    sort keys tell apart anyway (en passant before quiet promotions).
    """
    us = board.occupied_co[board.turn]
    moves = list(board.generate_legal_captures())
    pawns = board.pawns & us & (chess.BB_RANK_7 if board.turn == chess.WHITE else chess.BB_RANK_2)
    if pawns:
        moves += [m for m in board.generate_legal_moves(pawns, chess.BB_BACKRANKS & ~board.occupied)
                  if m.promotion == chess.QUEEN]
    return moves


def log_probabilities(moves: list[chess.Move], policy: dict[chess.Move, float]) -> list[float]:
    """ln P(child | parent): the policy when there is one, else uniform (Giraffe, section 5.3)."""
    if policy:
        total = sum(policy.get(m, 0.0) for m in moves)
        if total > 0:
            return [math.log(max(policy.get(m, 0.0) / total, 1e-30)) for m in moves]
    return [-math.log(len(moves))] * len(moves)
