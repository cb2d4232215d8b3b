"""Value quality: how well a network's expected score matches Stockfish's, as its own metric.

On an annotated split, ``p`` is the evaluator's expected score for the side to
move and ``y`` Stockfish's win probability for the side to move (``win``):

- MAE: mean |p - y|.
- Brier score: mean (p - y)^2, against Stockfish's probability (not a 0/1 result).
- Calibration: 10 equal-width bins of ``p`` over [0, 1] (the last bin includes
  1.0); per bin the count, mean ``p`` and mean ``y``. ECE (expected calibration
  error) = sum over bins of (count / N) * |mean p - mean y|.
- Signed error from WHITE's point of view, ``e_w = p_w - y_w`` with
  ``p_w = p`` when White is to move and ``1 - p`` when Black is (likewise
  ``y_w``), averaged separately over White-to-move and Black-to-move positions.
- Side-to-move bias = (mean e_w | White to move - mean e_w | Black to move) / 2,
  which equals the mean of (p - y) over the two colours: how much the
  network over-rates whoever is to move (an evaluator that adds ``b`` to every
  mover's score has bias exactly ``b``). White bias = the half-sum of the two
  means: how much it over-rates White whoever is to move.

Every figure is reported overall and per data source (``pgn``, ``selfplay``,
``perturb``): a network can over-rate the mover on quiet game positions and
under-rate it after a random move (the perturbed children), which cancels in
the overall means.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import chess
import numpy as np

from analysis.data.corpus_files import is_corpus, read_corpus
from analysis.data.sources import PositionSource
from analysis.data.store import read_annotated

CALIBRATION_BINS = 10
EVAL_BATCH = 256  # positions per evaluate() call: big enough for an efficient forward pass


@dataclass(frozen=True)
class ValueSamples:
    """Boards (with their move history) and Stockfish's win probability for the side to move."""

    boards: list[chess.Board]
    target: np.ndarray  # (N,) Stockfish win probability, side to move
    sources: list[str]

    @property
    def white_to_move(self) -> np.ndarray:
        return np.asarray([b.turn == chess.WHITE for b in self.boards], bool)


def load_value_samples(root: Path, split: str = "test", limit: int | None = None) -> ValueSamples:
    """Rows of ``split`` of an annotated dataset or a corpus as boards with history; ValueError when there are none."""
    columns = ["fen", "history_fen", "history_moves", "game_id", "ply", "source", "win"]
    if is_corpus(root):  # a position corpus (analysis.corpus) holds these columns itself
        table = read_corpus(root, columns=columns, split=split).select(columns)
    else:
        table = read_annotated(root, columns=columns, split=split)
    if limit is not None:
        table = table.slice(0, limit)
    rows = table.to_pylist()
    if not rows:
        raise ValueError(f"no annotated {split} positions in {root}")
    boards = [PositionSource(r["fen"], r["history_fen"], r["history_moves"], r["game_id"], r["ply"],
                             r["source"]).board() for r in rows]
    return ValueSamples(boards, np.asarray([r["win"] for r in rows], np.float64), [r["source"] for r in rows])


def predict_scores(evaluator, boards: Sequence[chess.Board], batch: int = EVAL_BATCH) -> np.ndarray:
    """The evaluator's expected score for the side to move, in batches of ``batch`` positions."""
    scores: list[float] = []
    for start in range(0, len(boards), batch):
        scores += [ev.score for ev in evaluator.evaluate(list(boards[start:start + batch]))]
    return np.asarray(scores, np.float64)


def search_scores(evaluator, boards: Sequence[chess.Board], algo: str, nodes: int | None = None) -> np.ndarray:
    """An agent's own expected score for the side to move: what search ``algo`` (e.g. the value
    agent's one-ply search) reports at the root, one position at a time."""
    from analysis.search import Budget, make_search

    search = make_search(algo, evaluator)
    budget = Budget(nodes=nodes) if nodes else None
    return np.asarray([search.run(board, budget).score for board in boards], np.float64)


def _mean(x: np.ndarray) -> float | None:
    return float(x.mean()) if len(x) else None


def calibration_bins(pred: np.ndarray, target: np.ndarray, bins: int = CALIBRATION_BINS) -> list[dict]:
    """Equal-width bins of ``pred``: [lo, hi) each, the last one closed."""
    index = np.minimum((pred * bins).astype(int), bins - 1)
    out = []
    for b in range(bins):
        mask = index == b
        out.append({"lo": b / bins, "hi": (b + 1) / bins, "count": int(mask.sum()),
                    "mean_predicted": _mean(pred[mask]), "mean_target": _mean(target[mask])})
    return out


def expected_calibration_error(bins: list[dict]) -> float:
    total = sum(b["count"] for b in bins)
    return sum(b["count"] / total * abs(b["mean_predicted"] - b["mean_target"]) for b in bins if b["count"])


def value_figures(pred: np.ndarray, target: np.ndarray, white_to_move: np.ndarray) -> dict:
    """Every figure of the module docstring for one group of positions (JSON-ready)."""
    error = pred - target  # side to move's view
    white_view = np.where(white_to_move, error, -error)
    white_mean, black_mean = _mean(white_view[white_to_move]), _mean(white_view[~white_to_move])
    both = white_mean is not None and black_mean is not None
    bins = calibration_bins(pred, target)
    return {
        "positions": int(len(pred)),
        "white_to_move": int(white_to_move.sum()),
        "mae": float(np.abs(error).mean()),
        "brier": float((error ** 2).mean()),
        "ece": expected_calibration_error(bins),
        "mean_predicted": float(pred.mean()),
        "mean_target": float(target.mean()),
        "signed_error_white_view": {"white_to_move": white_mean, "black_to_move": black_mean},
        "side_to_move_bias": (white_mean - black_mean) / 2 if both else None,
        "white_bias": (white_mean + black_mean) / 2 if both else None,
        "calibration": bins,
    }


def value_quality(pred: np.ndarray, samples: ValueSamples) -> dict:
    """Figures overall and per source: {"overall": {...}, "by_source": {source: {...}}}."""
    white = samples.white_to_move
    sources = np.asarray(samples.sources)
    return {
        "overall": value_figures(pred, samples.target, white),
        "by_source": {s: value_figures(pred[sources == s], samples.target[sources == s], white[sources == s])
                      for s in sorted(set(samples.sources))},
    }
