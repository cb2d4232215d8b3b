"""A fitted probe as one linear map on a readout point's raw stream, so the site can keep it in a
row's JSON and apply it to one position without scikit-learn objects.

A position-level probe is PCA -> StandardScaler -> linear model; all three are affine, so the probe's
score is ``w . x + b`` on the point's flattened stream ``x`` (``compose``). A square concept's probe
reads each square's C-vector: the same composition without the PCA, applied square by square.
``apply`` is the panel's side: scores per point for one position's activations.
"""

from __future__ import annotations

import base64

import numpy as np


def compose(model, pca=None) -> tuple[np.ndarray, float]:
    """(w, b) with ``w . x + b`` equal to ``fit.predict(model, pca.transform(x))`` (PCA optional)."""
    scaler, linear = model[0], model[-1]
    coef = np.asarray(linear.coef_, dtype=np.float64).reshape(-1)
    intercept = float(np.asarray(linear.intercept_).reshape(-1)[0])
    w = coef / scaler.scale_
    b = intercept - float(scaler.mean_ @ w)
    if pca is not None:
        b -= float(pca.mean_ @ (pca.components_.T @ w))
        w = pca.components_.T @ w
    return w.astype(np.float32), b


def pack(w: np.ndarray, b: float) -> dict:
    """JSON-ready: the weights as base64 of little-endian float32."""
    return {"w": base64.b64encode(np.ascontiguousarray(w, dtype="<f4").tobytes()).decode("ascii"), "b": b}


def unpack(stored: dict) -> tuple[np.ndarray, float]:
    return np.frombuffer(base64.b64decode(stored["w"]), dtype="<f4"), float(stored["b"])


def raw_score(stored: dict, x: np.ndarray) -> np.ndarray:
    """The probe's score (logit or prediction) on ``x``: (D,) gives one number, (64, C) one per square."""
    w, b = unpack(stored)
    return x.reshape(-1, len(w)).astype(np.float64) @ w.astype(np.float64) + b


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-np.asarray(z, dtype=np.float64)))
