"""A whole probe of one network: every concept at every readout point, beside its controls.

For each readout point the trained network, an untrained copy (same config, initialised with the
seed) and the input planes are probed on the same positions and splits. A position-level concept
reads the point's whole stream (64 x C flattened, or Giraffe's hidden vector) reduced by PCA to
``components`` dimensions (fitted on all the run's positions, labels unused), which keeps ten
thousand positions of a 4096-wide point within minutes on two cores; a square concept reads each
square's C-vector with one probe shared by the squares. Selectivity is trained minus control at
the concept's best point, with a paired bootstrap interval (the same resampled test positions).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from sklearn.decomposition import PCA
from threadpoolctl import threadpool_limits

from analysis.models.lens import LensAdapter
from analysis.probes.activations import Activations, collect, input_planes
from analysis.probes.fit import FitConfig, Score, fit, predict, score_rows, score_squares, square_rows
from analysis.probes.positions import TEST, TRAIN, VAL, ConceptSet, ProbeData

Progress = Callable[[str], None]


@dataclass(frozen=True)
class RunConfig:
    """``components``: PCA dimensions of a position-level probe's features; ``batch``: positions a pass."""

    components: int = 256
    pca_rows: int = 2048  # the PCA is fitted on this many positions (seeded), then applied to all
    batch: int = 256
    threads: int = 1  # BLAS threads for the probes: more only contend on a shared two-core machine
    fit: FitConfig = field(default_factory=FitConfig)


@dataclass
class PointProbe:
    """One concept's probe at one point: its score, and what erasure needs to refit it."""

    score: Score
    model: Any = None


def features(acts_point: np.ndarray, config: RunConfig, seed: int) -> tuple[np.ndarray, PCA | None]:
    """A position-level probe's features at a point: the stream flattened, PCA-reduced when wider
    than ``config.components`` (fitted on ``config.pca_rows`` positions drawn with the seed)."""
    flat = acts_point.reshape(len(acts_point), -1)
    if flat.shape[1] <= config.components:
        return flat, None
    rows = np.random.default_rng(seed).permutation(len(flat))[:config.pca_rows]
    k = min(config.components, len(rows) - 1)
    pca = PCA(n_components=k, svd_solver="randomized", iterated_power=3, random_state=seed).fit(flat[rows])
    return pca.transform(flat).astype(np.float32), pca


def probe_concept(cset: ConceptSet, square_x: np.ndarray | None, flat_x: np.ndarray | None,
                  config: FitConfig) -> PointProbe:
    """Fit on train, choose on validation, score on test. ``square_x`` (N, 64, C) for a square
    concept, ``flat_x`` (N, D) for the others (both indexed by the data's positions)."""
    split = [cset.rows(p) for p in (TRAIN, VAL, TEST)]
    kind = cset.concept.kind
    if kind == "square":
        x = square_x[cset.index]
        parts = [square_rows(x[r], cset.labels[r], config.square_rows if p == TRAIN else config.square_rows // 2,
                             config.seed) for p, r in enumerate(split)]
        model = fit(kind, *parts[0], *parts[1], config)
        test = split[TEST]
        pred = predict(model, x[test].reshape(-1, x.shape[-1])).reshape(len(test), 64)
        return PointProbe(score_squares(pred, cset.labels[test], config), model)
    x = flat_x[cset.index]
    model = fit(kind, x[split[0]], cset.labels[split[0]], x[split[1]], cset.labels[split[1]], config)
    return PointProbe(score_rows(kind, predict(model, x[split[2]]), cset.labels[split[2]], config), model)


def probe_points(acts: Activations, data: ProbeData, config: RunConfig, seed: int,
                 progress: Progress | None = None) -> dict[str, list[PointProbe | None]]:
    """Every concept at every point of ``acts``: {concept: [PointProbe per point]} (None where the
    concept cannot be read there: a square concept at a point without squares)."""
    out: dict[str, list[PointProbe | None]] = {name: [] for name in data.sets}
    for k, point in enumerate(acts.points):
        x = acts.point(k)
        flat, _ = features(x, config, seed)
        for name, cset in data.sets.items():
            if cset.concept.kind == "square" and not acts.per_square:
                out[name].append(None)
                continue
            out[name].append(probe_concept(cset, x if acts.per_square else None, flat, config.fit))
        if progress is not None:
            progress(point)
    return out


def probe_input(data: ProbeData, config: RunConfig) -> dict[str, PointProbe]:
    """The input control: the position's piece planes, per square or flattened (768)."""
    planes = input_planes(data.boards)
    flat = planes.reshape(len(planes), -1)
    return {name: probe_concept(cset, planes, flat, config.fit) for name, cset in data.sets.items()}


def best_point(probes: list[PointProbe | None]) -> int | None:
    """The point of the highest score (the first of equals), None when no point reads the concept."""
    scores = [-np.inf if p is None or not np.isfinite(p.score.score) else p.score.score for p in probes]
    return None if all(s == -np.inf for s in scores) else int(np.argmax(scores))


def concept_entry(cset: ConceptSet, points: list[str], trained: list, untrained: list,
                  control: PointProbe) -> dict[str, Any]:
    """One concept as the CLI prints it (the contract of issue 39)."""
    best = best_point(trained)
    entry: dict[str, Any] = {
        "kind": cset.concept.kind,
        "metric": "r2" if cset.concept.kind == "regression" else "auroc",
        "balance": None if cset.balance is None else round(cset.balance, 4),
        "size": {part: int((cset.split == i).sum()) for i, part in enumerate(("train", "val", "test"))},
        "trained": [None if p is None else p.score.to_dict() for p in trained],
        "untrained": [None if p is None else p.score.to_dict() for p in untrained],
        "input": control.score.to_dict(),
        "best_point": None if best is None else points[best],
    }
    if best is None:
        entry["why"] = "a square concept needs squares, and this network's readout points have none"
        return entry
    entry["selectivity"] = {"untrained": trained[best].score.minus(untrained[best].score).to_dict(),
                            "input": trained[best].score.minus(control.score).to_dict()}
    return entry


def probe_network(adapter: LensAdapter, untrained: LensAdapter, data: ProbeData, config: RunConfig, seed: int,
                  progress: Progress | None = None, keep: bool = False):
    """The probe of one network and its untrained copy over ``data``: (JSON-ready dict, the trained
    probes per concept and point, the trained activations when ``keep``, for erasure)."""
    with threadpool_limits(config.threads):
        return _probe_network(adapter, untrained, data, config, seed, progress or (lambda _text: None), keep)


def _probe_network(adapter, untrained, data, config, seed, say, keep):
    say("reading the trained network")
    acts = collect(adapter, data.boards, config.batch)
    trained = probe_points(acts, data, config, seed, lambda p: say(f"probed trained {p}"))
    if not keep:
        acts = None
    say("reading the untrained copy")
    raw = collect(untrained, data.boards, config.batch)
    control_net = probe_points(raw, data, config, seed, lambda p: say(f"probed untrained {p}"))
    del raw
    control = probe_input(data, config)
    points = list(adapter.readouts)
    concepts = {name: concept_entry(cset, points, trained[name], control_net[name], control[name])
                for name, cset in data.sets.items()}
    return {"points": points, "concepts": concepts}, trained, acts


def erase_all(adapter: LensAdapter, data: ProbeData, result: dict[str, Any], acts: Activations, config: RunConfig,
              erase_config, seed: int, progress: Progress | None = None) -> None:
    """Adds ``erasure`` to every concept of ``result`` (at its best point; see ``analysis.probes.erasure``)."""
    from analysis.probes.erasure import erase

    with threadpool_limits(config.threads):
        for name, entry in result["concepts"].items():
            point = entry["best_point"]
            if point is None:
                entry["erasure"] = {"why": entry["why"]}
                continue
            x = acts.point(acts.points.index(point))
            if data.sets[name].concept.kind == "square":
                pca = None
            else:
                x = x.reshape(len(x), -1)
                pca = features(x, config, seed)[1]
            entry["erasure"] = erase(adapter, data, data.sets[name], point, x, pca, erase_config, config.fit)
            if progress is not None:
                progress(f"erased {name}")
