"""The look-ahead paper's bilinear probe: does one readout point hold the move two turns ahead?

Jenner et al. (2024, section 3.3) predict the 3rd move's target square from a layer's 64 square
vectors X, conditioned on the vector Z on the 1st move's target square: the logit of square s is
``sum_k (W_x X[s])_k (W_z Z)_k / sqrt(k)``, rank k = 32. A second probe of the same form predicts the
3rd move's source square from the target square's vector (the true one in training, the predicted
one at test), and the score is the whole move (both squares right). Squares are real squares
(a1 = 0), as ``LensAdapter.square_stream`` gives them.

Everything runs under a ``torch.Generator`` (initialisation, split, batches) with one torch thread,
so a seed gives the same accuracy on every run.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch
from scipy import stats

from analysis.studies.settings import ProbeConfig  # torch-free: the site validates probe settings

__all__ = ["BilinearProbe", "MoveProbeData", "ProbeConfig", "ProbeResult", "fit_square_probe",
           "probe_whole_move", "whole_move_accuracy"]


@dataclass
class MoveProbeData:
    """One readout point over N positions: ``x`` (N, 64, C) square vectors by real square, and per
    position the 1st move's target and the 3rd move's source and target squares ((N,) long)."""

    x: torch.Tensor
    first_target: torch.Tensor
    third_source: torch.Tensor
    third_target: torch.Tensor

    def __post_init__(self):
        n = self.x.shape[0]
        if self.x.dim() != 3 or self.x.shape[1] != 64:
            raise ValueError(f"x must be (N, 64, C), not {tuple(self.x.shape)}")
        for name in ("first_target", "third_source", "third_target"):
            if getattr(self, name).shape != (n,):
                raise ValueError(f"{name} must hold one square per position ({n})")

    def __len__(self) -> int:
        return self.x.shape[0]

    def subset(self, rows: torch.Tensor) -> "MoveProbeData":
        return MoveProbeData(self.x[rows], self.first_target[rows], self.third_source[rows], self.third_target[rows])


@dataclass(frozen=True)
class ProbeResult:
    """Whole-move accuracy on the held-out 30%: its mean over seeds, the t interval (95%) of that
    mean, and each seed's value."""

    mean: float
    low: float
    high: float
    per_seed: tuple[float, ...]
    train: int
    test: int

    def to_dict(self) -> dict:
        return {"mean": self.mean, "low": self.low, "high": self.high, "per_seed": list(self.per_seed),
                "train": self.train, "test": self.test}


class BilinearProbe(torch.nn.Module):
    """Logits over the 64 squares: ``(W_x X[s]) . (W_z Z) / sqrt(rank)`` (no bias: a constant shifts
    every square alike, so it cannot change a softmax over squares)."""

    def __init__(self, channels: int, rank: int, generator: torch.Generator):
        super().__init__()
        scale = channels ** -0.5
        self.w_x = torch.nn.Parameter(torch.randn(rank, channels, generator=generator) * scale)
        self.w_z = torch.nn.Parameter(torch.randn(rank, channels, generator=generator) * scale)

    def forward(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        keys = x @ self.w_x.T  # (N, 64, k)
        query = z @ self.w_z.T  # (N, k)
        return torch.einsum("nsk,nk->ns", keys, query) / math.sqrt(self.w_x.shape[0])


@contextmanager
def _one_thread():
    """Float sums depend on how torch splits them over threads: train on one, then restore."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def fit_square_probe(x: torch.Tensor, z: torch.Tensor, target: torch.Tensor, config: ProbeConfig,
                     generator: torch.Generator) -> BilinearProbe:
    """Train one probe (cross-entropy over the 64 squares) on (x, z) -> target with Adam."""
    probe = BilinearProbe(x.shape[-1], config.rank, generator)
    optimiser = torch.optim.Adam(probe.parameters(), lr=config.lr)
    with torch.enable_grad():
        for _ in range(config.epochs):
            order = torch.randperm(len(x), generator=generator)
            for rows in order.split(config.batch):
                loss = torch.nn.functional.cross_entropy(probe(x[rows], z[rows]), target[rows])
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
    return probe.eval()


def _gather(x: torch.Tensor, squares: torch.Tensor) -> torch.Tensor:
    """(N, C): each position's vector on its given square."""
    return x[torch.arange(len(x)), squares]


def whole_move_accuracy(data: MoveProbeData, config: ProbeConfig, seed: int) -> tuple[float, int, int]:
    """One seed: a seeded 70/30 split, both probes trained on the 70%, the whole 3rd move scored on the
    30% (the source probe reads the *predicted* target's vector there). Returns (accuracy, train, test)."""
    n = len(data)
    train_n = int(n * config.train_share)
    if train_n < 1 or n - train_n < 1:
        raise ValueError(f"the probe needs at least one position to train on and one to test, not {n} in all")
    generator = torch.Generator().manual_seed(seed)
    order = torch.randperm(n, generator=generator)
    train, test = data.subset(order[:train_n]), data.subset(order[train_n:])
    x_train, x_test = train.x.float(), test.x.float()
    with _one_thread():
        target_probe = fit_square_probe(x_train, _gather(x_train, train.first_target), train.third_target,
                                        config, generator)
        source_probe = fit_square_probe(x_train, _gather(x_train, train.third_target), train.third_source,
                                        config, generator)
        with torch.no_grad():
            target = target_probe(x_test, _gather(x_test, test.first_target)).argmax(-1)
            source = source_probe(x_test, _gather(x_test, target)).argmax(-1)
    right = (target == test.third_target) & (source == test.third_source)
    return int(right.sum()) / len(right), train_n, n - train_n


def probe_whole_move(data: MoveProbeData, config: ProbeConfig = ProbeConfig(), seed: int = 0) -> ProbeResult:
    """``config.seeds`` runs (seeds ``seed``, ``seed + 1``, ...): the mean whole-move accuracy and its 95%
    t interval over seeds (a single seed's interval is the point itself)."""
    runs = [whole_move_accuracy(data, config, seed + s) for s in range(config.seeds)]
    values = np.array([r[0] for r in runs])
    mean = float(values.mean())
    if len(values) > 1:
        half = float(stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / math.sqrt(len(values)))
    else:
        half = 0.0
    return ProbeResult(mean=mean, low=max(0.0, mean - half), high=min(1.0, mean + half),
                       per_seed=tuple(float(v) for v in values), train=runs[0][1], test=runs[0][2])
