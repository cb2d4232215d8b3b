"""Linear probes (scikit-learn) and their scores with seeded bootstrap 95% intervals.

- binary: standardised features, ``LogisticRegression`` (L2 by default, or L1), C chosen on the
  validation split by AUROC; scored by AUROC on the (balanced) test split;
- regression: standardised features, ``Ridge`` (L2) or ``Lasso`` (L1), alpha chosen on the
  validation split by R^2; scored by R^2;
- square: one logistic probe shared by every square, trained on the (position, candidate square)
  rows; scored by the AUROC of each square over the test positions where it is a candidate,
  averaged over the squares that have both classes there.

Never accuracy: AUROC does not reward predicting the majority class. Intervals: ``bootstrap``
resamples of the test *positions* (seeded multinomial weights), percentile 2.5 to 97.5.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso, LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler


@dataclass(frozen=True)
class FitConfig:
    """``grid``: the values of C (logistic) tried on the validation split; a regression tries
    alpha = 1 / C. ``square_rows``: at most this many training rows for a square probe."""

    penalty: str = "l2"
    grid: tuple[float, ...] = (0.001, 0.01, 0.1, 1.0)
    bootstrap: int = 200
    seed: int = 0
    square_rows: int = 40000
    max_iter: int = 300


@dataclass(frozen=True)
class Score:
    """A metric with its 95% interval; ``draws`` are its bootstrap values (paired between two
    probes scored on the same test rows: the resamples are seeded alike), not printed."""

    score: float
    low: float
    high: float
    draws: np.ndarray | None = field(default=None, repr=False, compare=False)

    def minus(self, other: "Score") -> "Score":
        """The paired difference self - other with its interval (selectivity)."""
        if self.draws is None or other.draws is None:
            return Score(self.score - other.score, float("nan"), float("nan"))
        return _interval(self.score - other.score, self.draws - other.draws)

    def to_dict(self) -> dict[str, float]:
        return {"score": round(self.score, 4), "low": round(self.low, 4), "high": round(self.high, 4)}


def _model(kind: str, c: float, config: FitConfig):
    if kind == "regression":
        reg = Ridge(alpha=1.0 / c) if config.penalty == "l2" else Lasso(alpha=0.01 / c, max_iter=config.max_iter)
    elif config.penalty == "l1":
        reg = LogisticRegression(C=c, penalty="l1", solver="liblinear", max_iter=config.max_iter)
    else:
        reg = LogisticRegression(C=c, max_iter=config.max_iter)
    return make_pipeline(StandardScaler(), reg)


def predict(model, x: np.ndarray) -> np.ndarray:
    """The probe's score per row: the logit (binary, square) or the prediction (regression)."""
    return model.decision_function(x) if hasattr(model, "decision_function") else model.predict(x)


def fit(kind: str, x_train: np.ndarray, y_train: np.ndarray, x_val: np.ndarray, y_val: np.ndarray,
        config: FitConfig = FitConfig()):
    """The probe of the grid's best value on the validation split (``kind`` binary or regression;
    a square probe is a binary one on its candidate rows)."""
    kind = "binary" if kind == "square" else kind
    metric = r2 if kind == "regression" else auroc
    best, best_value = None, -np.inf
    for c in config.grid:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = _model(kind, c, config).fit(x_train, y_train)
        value = metric(predict(model, x_val), y_val)
        if best is None or value > best_value:
            best, best_value = model, value
    return best


# --- metrics: plain and bootstrapped -----------------------------------------------------------

def weighted_auroc(scores: np.ndarray, labels: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """AUROC under each row of ``weights`` (B, n): P(score of a positive > a negative), ties half."""
    order = np.argsort(scores, kind="stable")
    s, y, w = scores[order], labels[order] > 0.5, weights[:, order].astype(np.float64)
    neg = np.where(y, 0.0, w)
    below = np.cumsum(neg, axis=1) - neg  # negative weight strictly before each row in the order
    # ties: a run of equal scores shares half of its negatives
    starts = np.r_[True, s[1:] != s[:-1]]
    group = np.cumsum(starts) - 1
    group_neg = np.zeros((w.shape[0], group[-1] + 1))
    np.add.at(group_neg.T, group, neg.T)
    first = np.flatnonzero(starts)
    before_group = below[:, first][:, group]
    u = (np.where(y, w, 0.0) * (before_group + 0.5 * group_neg[:, group])).sum(axis=1)
    pos_w, neg_w = np.where(y, w, 0.0).sum(axis=1), neg.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return u / (pos_w * neg_w)


def weighted_r2(pred: np.ndarray, target: np.ndarray, weights: np.ndarray) -> np.ndarray:
    w = weights.astype(np.float64)
    total = w.sum(axis=1, keepdims=True)
    mean = (w * target).sum(axis=1, keepdims=True) / total
    with np.errstate(invalid="ignore", divide="ignore"):
        return 1.0 - (w * (target - pred) ** 2).sum(axis=1) / (w * (target - mean) ** 2).sum(axis=1)


def auroc(scores: np.ndarray, labels: np.ndarray) -> float:
    return float(weighted_auroc(scores, labels, np.ones((1, len(scores))))[0])


def r2(pred: np.ndarray, target: np.ndarray) -> float:
    return float(weighted_r2(pred, target, np.ones((1, len(pred))))[0])


def _weights(n: int, config: FitConfig) -> np.ndarray:
    rng = np.random.default_rng(config.seed)
    return rng.multinomial(n, np.full(n, 1.0 / n), size=config.bootstrap)


def _interval(point: float, draws: np.ndarray) -> Score:
    finite = draws[np.isfinite(draws)]
    low, high = np.percentile(finite, [2.5, 97.5]) if len(finite) else (np.nan, np.nan)
    return Score(float(point), float(low), float(high), draws)


def score_rows(kind: str, pred: np.ndarray, y: np.ndarray, config: FitConfig = FitConfig()) -> Score:
    """AUROC (binary) or R^2 (regression) of ``pred`` on ``y`` with its bootstrap interval."""
    metric = weighted_r2 if kind == "regression" else weighted_auroc
    point = metric(pred, y, np.ones((1, len(y))))[0]
    return _interval(point, metric(pred, y, _weights(len(y), config)))


def score_squares(pred: np.ndarray, labels: np.ndarray, config: FitConfig = FitConfig()) -> Score:
    """``pred`` and ``labels`` (n positions, 64), labels NaN off the candidates: the mean over squares
    of each square's AUROC (squares with both classes in the test set), positions bootstrapped."""
    weights = _weights(len(pred), config)
    point, draws = [], []
    for square in range(64):
        rows = np.flatnonzero(np.isfinite(labels[:, square]))
        y = labels[rows, square]
        if len(rows) < 2 or y.min() == y.max():
            continue
        w = np.vstack([np.ones((1, len(rows))), weights[:, rows]])
        values = weighted_auroc(pred[rows, square], y, w)
        point.append(values[0])
        draws.append(values[1:])
    if not point:
        return Score(float("nan"), float("nan"), float("nan"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return _interval(float(np.mean(point)), np.nanmean(np.array(draws), axis=0))


def square_rows(x: np.ndarray, labels: np.ndarray, limit: int | None = None, seed: int = 0):
    """(n, 64, C) and (n, 64) -> the candidate rows (m, C), (m,), at most ``limit`` of them (seeded)."""
    pos, sq = np.nonzero(np.isfinite(labels))
    if limit is not None and len(pos) > limit:
        keep = np.sort(np.random.default_rng(seed).choice(len(pos), limit, replace=False))
        pos, sq = pos[keep], sq[keep]
    return x[pos, sq], labels[pos, sq]
