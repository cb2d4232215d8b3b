"""The intervals a study's table shows: mean ± s.e. over positions, and a share with its Wilson 95%
interval (scipy). Cells are plain dicts, so they go to JSON as they are."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy.stats import binomtest


def mean_se(values: Sequence[float]) -> dict:
    """{"mean", "se", "n"}: the standard error of the mean (ddof 1; 0 for fewer than two values)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return {"mean": None, "se": None, "n": 0}
    se = float(x.std(ddof=1) / np.sqrt(x.size)) if x.size > 1 else 0.0
    return {"mean": float(x.mean()), "se": se, "n": int(x.size)}


def share(count: int, total: int) -> dict:
    """{"score", "low", "high", "count", "n"}: count/total with its Wilson 95% interval."""
    if total == 0:
        return {"score": None, "low": None, "high": None, "count": 0, "n": 0}
    ci = binomtest(count, total).proportion_ci(0.95, method="wilson")
    return {"score": count / total, "low": float(ci.low), "high": float(ci.high), "count": count, "n": total}
