"""Action accuracy and Kendall's tau against Stockfish on an annotated test split.

For every test position with action values (multipv), the agent's move
scores are compared with Stockfish's win probabilities:

- action accuracy: the agent's top move is among the moves with Stockfish's
  maximum win probability (ties count as correct, as in ChessBench);
- Kendall's tau-b between the agent's move scores and Stockfish's (1.0 when
  there is a single legal move). ChessBench's metrics_evaluator correlates
  ``argsort`` permutations instead of ranks; we use the rank correlation the
  metric is defined by, so our numbers are not directly comparable to theirs.

Move scores: the policy probability for "policy", the value after the move
(the depth-1 search's root scores) for "value".
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import chess
import numpy as np
from tqdm import tqdm

from analysis.data.sources import PositionSource
from analysis.data.store import read_annotated
from analysis.encoding import index_to_move


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b (tie-corrected), O(n^2); n is a move list, so that is fine."""
    n = len(x)
    if n < 2:
        return 1.0
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    upper = np.triu_indices(n, 1)
    sx, sy = dx[upper], dy[upper]
    concordant_minus_discordant = float((sx * sy).sum())
    n0 = len(sx)
    tx, ty = float((sx == 0).sum()), float((sy == 0).sum())
    denom = np.sqrt((n0 - tx) * (n0 - ty))
    return concordant_minus_discordant / denom if denom > 0 else 0.0


@dataclass
class StaticReport:
    positions: int
    action_accuracy: float
    kendall_tau: float

    def to_json(self) -> dict:
        return {"positions": self.positions, "action_accuracy": round(self.action_accuracy, 4),
                "kendall_tau": round(self.kendall_tau, 4)}


def load_test_positions(root: Path, limit: int | None = None) -> list[tuple[chess.Board, dict[chess.Move, float]]]:
    """(board with history, Stockfish win probability per move) for annotated test rows."""
    table = read_annotated(root, columns=["fen", "history_fen", "history_moves", "game_id", "ply", "source",
                                          "action_indices", "action_win"], split="test")
    out = []
    for row in table.to_pylist():
        if not row["action_indices"]:
            continue
        board = PositionSource(row["fen"], row["history_fen"], row["history_moves"], row["game_id"],
                               row["ply"], row["source"]).board()
        values = {index_to_move(board, i): w for i, w in zip(row["action_indices"], row["action_win"])}
        if len(values) != board.legal_moves.count():
            continue  # incomplete multipv: skip rather than guess
        out.append((board, values))
        if limit is not None and len(out) >= limit:
            break
    if not out:
        raise ValueError(f"no test positions with action values in {root}")
    return out


def move_scores(evaluator, algo: str, board: chess.Board) -> dict[chess.Move, float]:
    if algo == "policy":
        return evaluator.evaluate([board])[0].policy
    if algo == "value":
        from analysis.search import run_search

        result = run_search("value", board, evaluator)
        return {r.move: r.score for r in result.root}
    raise ValueError(f"static metrics support the policy and value agents, not {algo!r}")


# Positions whose successors the value agent evaluates together: about 30 successors each,
# so one prefetch fills a few full forward passes (analysis.eval.prefetch.PREFETCH_BATCH).
VALUE_PREFETCH_POSITIONS = 16


def successors_to_evaluate(board: chess.Board) -> list[chess.Board]:
    """The successors the value search sends to the network (those the rules do not settle)."""
    from analysis.search.base import terminal_value

    out = []
    for move in board.legal_moves:
        board.push(move)
        if terminal_value(board, in_search=False) is None:
            out.append(board.copy())
        board.pop()
    return out


def evaluate_static(evaluator, algo: str, positions, *, progress: bool = False) -> StaticReport:
    """For the value agent, successors of ``VALUE_PREFETCH_POSITIONS`` positions share forward passes."""
    from analysis.eval.prefetch import PrefetchedEvaluator

    # An action-value network scores every move in one call; there are no successors to prefetch.
    prefetch = algo == "value" and not evaluator.capabilities.action_values
    if prefetch:
        evaluator = PrefetchedEvaluator(evaluator)
    correct, taus = 0, []
    for i, (board, truth) in enumerate(tqdm(positions, desc=f"static {algo}", unit="pos", disable=not progress)):
        if prefetch and i % VALUE_PREFETCH_POSITIONS == 0:
            evaluator.clear()
            ahead = positions[i:i + VALUE_PREFETCH_POSITIONS]
            evaluator.prefetch([s for b, _ in ahead for s in successors_to_evaluate(b)])
        scores = move_scores(evaluator, algo, board)
        moves = list(truth)
        predicted = np.asarray([scores.get(m, float("-inf")) for m in moves], np.float64)
        target = np.asarray([truth[m] for m in moves], np.float64)
        best = moves[int(np.argmax(predicted))]
        correct += truth[best] >= target.max()
        taus.append(kendall_tau_b(np.nan_to_num(predicted, neginf=-1e9), target))
    return StaticReport(len(positions), correct / len(positions), float(np.mean(taus)))


def evaluate_static_greedy(agent, positions) -> StaticReport:
    """Baseline: action accuracy of an agent's chosen move; tau from 1-ply material after each move."""
    from analysis.material import material_balance

    correct, taus = 0, []
    for board, truth in positions:
        choice = agent.choose(board)
        moves = list(truth)
        target = np.asarray([truth[m] for m in moves], np.float64)
        correct += truth[choice] >= target.max()
        predicted = []
        for m in moves:
            board.push(m)
            predicted.append(1000.0 if board.is_checkmate() else material_balance(board, not board.turn))
            board.pop()
        taus.append(kendall_tau_b(np.asarray(predicted), target))
    return StaticReport(len(positions), correct / len(positions), float(np.mean(taus)))
