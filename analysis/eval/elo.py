"""Elo ratings from game results: the weighted least squares fit of AlphaGateau (appendix A).

For every pair (i, j) with w wins, d draws, l losses for i, the Jeffreys
estimate p = (w + (d + 1)/2) / (n + 1) (one artificial draw, so a clean
sweep stays finite) gives an observed difference
``r_i - r_j = 400/ln10 * ln(p / (1 - p))`` with delta-method variance
``(400/ln10)^2 / (n p (1 - p))``. A weighted least squares fit over all pairs,
with one player's rating anchored (or the mean fixed), gives ratings and
their standard errors; we report 95% intervals (+-1.96 sigma).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

SCALE = 400.0 / math.log(10.0)


@dataclass(frozen=True)
class PairResult:
    a: str
    b: str
    wins: int  # for a
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses


@dataclass
class EloFit:
    ratings: dict[str, float]
    stderr: dict[str, float]

    def interval(self, player: str, z: float = 1.96) -> tuple[float, float]:
        r, s = self.ratings[player], self.stderr[player]
        return r - z * s, r + z * s


def pair_difference(wins: int, draws: int, losses: int) -> tuple[float, float]:
    """(r_a - r_b, its variance) from one pairing, AlphaGateau's estimator."""
    n = wins + draws + losses
    if n == 0:
        raise ValueError("no games")
    p = (wins + (draws + 1) / 2) / (n + 1)
    return SCALE * math.log(p / (1 - p)), SCALE ** 2 / (n * p * (1 - p))


def fit_elo(results: list[PairResult], *, anchor: str | None = None, anchor_rating: float = 0.0,
            mean_rating: float = 1000.0) -> EloFit:
    """WLS ratings. With ``anchor``, that player is fixed at ``anchor_rating`` (stderr 0)."""
    players = sorted({r.a for r in results} | {r.b for r in results})
    if len(players) < 2:
        raise ValueError("need games between at least two players")
    if anchor is not None and anchor not in players:
        raise ValueError(f"anchor {anchor!r} played no games")
    free = [p for p in players if p != anchor]
    col = {p: i for i, p in enumerate(free)}
    rows, y, w = [], [], []
    for r in results:
        if r.games == 0:
            continue
        diff, var = pair_difference(r.wins, r.draws, r.losses)
        row = np.zeros(len(free))
        target = diff
        for player, sign in ((r.a, 1.0), (r.b, -1.0)):
            if player == anchor:
                target -= sign * anchor_rating
            else:
                row[col[player]] += sign
        rows.append(row)
        y.append(target)
        w.append(1.0 / var)
    if anchor is None:  # translation invariance: pin the mean with a heavy pseudo-observation
        rows.append(np.ones(len(free)) / len(free))
        y.append(mean_rating)
        w.append(1e6 * max(w))
    X, Y, W = np.asarray(rows), np.asarray(y), np.asarray(w)
    XtW = X.T * W
    cov = np.linalg.pinv(XtW @ X)
    beta = cov @ XtW @ Y
    ratings = {p: float(beta[col[p]]) for p in free}
    stderr = {p: float(math.sqrt(max(cov[col[p], col[p]], 0.0))) for p in free}
    if anchor is not None:
        ratings[anchor], stderr[anchor] = anchor_rating, 0.0
    return EloFit(ratings, stderr)


def elo_difference(wins: int, draws: int, losses: int, z: float = 1.96) -> dict:
    """Head-to-head Elo difference with a confidence interval (the two-player WLS fit)."""
    diff, var = pair_difference(wins, draws, losses)
    sigma = math.sqrt(var)
    n = wins + draws + losses
    return {"elo_diff": round(diff, 1), "ci95": [round(diff - z * sigma, 1), round(diff + z * sigma, 1)],
            "stderr": round(sigma, 1), "score": round((wins + draws / 2) / n, 4), "games": n,
            "wins": wins, "draws": draws, "losses": losses}
