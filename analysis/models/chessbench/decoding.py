"""ChessBench outputs -> Evaluations and action values.

- Value: the expected win probability under the predicted bins, sum_i p_i * centre_i
  (reference ``neural_engines.py``). The bins give no draw share, so there is no WDL.
- Action value (79-token rows, one per legal move, ascending action index): each move's
  win probability; the position's score is the best move's; the policy, for searches
  that need one, is softmax(win / (POLICY_TEMPERATURE * temperature)).
- State value: the position's own win probability; no policy (the value search plays it
  by evaluating every successor in one batch).
- Behavioural cloning: the 1968 logits over the legal moves; no value head, so the score
  is a neutral 0.5 and ``capabilities.value`` is False.

The network names its output by head ("action_logits", "value_logits" or "policy_logits"),
so decoding needs no config.

Attention: the 64 board tokens' maps in real squares (the BOS position is dropped; the
FEN's rank-8-first order is undone through the encoding's ``square_tokens``). An
action-value position's maps are the mean over its legal moves' rows.
"""

from __future__ import annotations

from typing import Sequence

import chess
import numpy as np

from analysis.encoding import Encoding
from analysis.evaluator import Evaluation, NonFiniteOutput, softmax_over_legal
from analysis.models.chessbench.config import ACTION_VALUE, BEHAVIOURAL_CLONING, STATE_VALUE, ChessBenchConfig
from analysis.models.chessbench.model import OUTPUT_NAMES as LOGITS

# The reference notebook samples its action-value agent at T = 0.005 (win probabilities differ
# by hundredths between good moves); the caller's temperature scales it.
POLICY_TEMPERATURE = 0.005


def bin_centres(bins: int) -> np.ndarray:
    return (np.arange(bins, dtype=np.float64) + 0.5) / bins


def expected_win(logits: np.ndarray) -> np.ndarray:
    """(N, K) logits -> (N,) expected win probability in [0, 1]."""
    z = logits.astype(np.float64)
    p = np.exp(z - z.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return p @ bin_centres(z.shape[-1])


def inputs(boards: Sequence[chess.Board], encoding: Encoding, config: ChessBenchConfig) -> np.ndarray:
    """The network's rows for ``boards``: the 77 FEN tokens, and for action values one row per
    legal move with its action appended (a board without moves gets one dummy row, kept for
    its attention maps)."""
    fens = encoding.encode(boards)  # (B, 77)
    if config.head != ACTION_VALUE:
        return fens
    rows = []
    for i, board in enumerate(boards):
        _, actions = encoding.legal_moves(board)
        actions = actions if len(actions) else np.zeros(1, np.int64)
        rows.append(np.concatenate([np.repeat(fens[i:i + 1], len(actions), 0), actions[:, None]], axis=1))
    return np.concatenate(rows)  # (sum of max(1, moves), 78)


def _row_slices(boards: Sequence[chess.Board], encoding: Encoding, per_move: bool):
    """(board, its legal moves, their action indices, its rows) for each board."""
    start = 0
    for board in boards:
        moves, actions = encoding.legal_moves(board)
        count = max(1, len(moves)) if per_move else 1
        yield board, moves, actions, slice(start, start + count)
        start += count


def _check_finite(name: str, board: chess.Board, out: dict[str, np.ndarray], rows: slice) -> None:
    bad = [key for key in (*LOGITS.values(), "attention") if key in out and not np.isfinite(out[key][rows]).all()]
    if bad:
        raise NonFiniteOutput(f"{name} gave non-finite output ({', '.join(bad)}) for the position {board.fen()}")


def _game_over_score(board: chess.Board) -> float:
    return 0.0 if board.is_checkmate() else 0.5



def decode(out: dict[str, np.ndarray], boards: Sequence[chess.Board], encoding: Encoding, *,
           temperature: float = 1.0, attention: bool = False, name: str = "chessbench") -> list[Evaluation]:
    if temperature <= 0:
        raise ValueError("temperature must be positive")
    per_move = LOGITS[ACTION_VALUE] in out
    evaluations = []
    for board, moves, actions, rows in _row_slices(boards, encoding, per_move):
        _check_finite(name, board, out, rows)
        policy: dict[chess.Move, float] = {}
        if per_move:
            if moves:
                move_wins = expected_win(out[LOGITS[ACTION_VALUE]][rows])
                score = float(move_wins.max())
                policy = softmax_over_legal(move_wins, moves, np.arange(len(moves)),
                                            POLICY_TEMPERATURE * temperature)
            else:
                score = _game_over_score(board)
        elif LOGITS[BEHAVIOURAL_CLONING] in out:
            score = 0.5  # no value head: a neutral score (capabilities.value is False)
            policy = softmax_over_legal(out[LOGITS[BEHAVIOURAL_CLONING]][rows.start], moves, actions, temperature)
        else:
            score = float(expected_win(out[LOGITS[STATE_VALUE]][rows])[0])
        maps = None
        if attention:
            mean = out["attention"][rows].mean(0)[..., 1:, 1:]  # (L, H, T - 1, T - 1) without BOS
            maps = encoding.to_real_squares(mean, board)  # (L, H, 64, 64)
        evaluations.append(Evaluation(score=score, policy=policy, attention=maps))
    return evaluations


def decode_actions(out: dict[str, np.ndarray], boards: Sequence[chess.Board], encoding: Encoding, *,
                   name: str = "chessbench") -> list[dict[chess.Move, float]]:
    """Each legal move's predicted win probability for the mover (action-value networks)."""
    result = []
    for board, moves, _, rows in _row_slices(boards, encoding, True):
        _check_finite(name, board, out, rows)
        result.append(dict(zip(moves, expected_win(out[LOGITS[ACTION_VALUE]][rows])[: len(moves)].tolist())))
    return result
