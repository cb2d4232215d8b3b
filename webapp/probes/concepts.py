"""The concept atlas and a position's concept scores, Django-free: what the worker computes.

``atlas`` probes every concept at every readout point of a network (``analysis.probes``: balanced
sets, fixed split, untrained and input controls, bootstrap intervals) and keeps each fitted probe as a
linear map (``maps``); ``position_scores`` applies those maps to one position's activations, the
Concepts panel's strips. A concept whose pool cannot make a balanced set is kept with its reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import chess
import numpy as np

from webapp.probes import maps

# The atlas's concepts: the contract's ten but the engine lane's (no Stockfish in a worker's loop).
CONCEPTS = ("piece_on_square", "material", "in_check", "own_en_prise", "opp_en_prise", "mobility",
            "mate_in_one", "mate_threat", "passed_pawns", "pin")


@dataclass(frozen=True)
class AtlasSettings:
    """``positions`` per concept (train + validation + test); the rest as ``analysis.probes.run.RunConfig``."""

    positions: int = 2000
    concepts: tuple[str, ...] = CONCEPTS
    components: int = 256
    bootstrap: int = 200
    seed: int = 0
    fens: tuple[str, ...] | None = None  # the pool (default: the shared games and puzzles)


@dataclass
class Counter:
    """Progress over the atlas's steps (each message of the probe run counts one)."""

    total: int
    report: Callable[[int, int], None]
    done: int = field(default=0)

    def __call__(self, _message: str) -> None:
        self.done = min(self.done + 1, self.total)
        self.report(self.done, self.total)


def balanced_data(names, settings: AtlasSettings):
    """(ProbeData of the concepts that can be balanced, {name: why} for those that cannot)."""
    from analysis.probes.concepts import get_concept
    from analysis.probes.positions import PositionConfig, build, pool

    config = PositionConfig(positions=settings.positions, seed=settings.seed)
    fens = list(settings.fens) if settings.fens is not None else pool(config)
    concepts, why = [get_concept(n) for n in names], {}
    while concepts:
        try:
            return build(concepts, config, fens=fens), why
        except ValueError as exc:
            failing = next((c for c in concepts if str(exc).startswith(f"{c.name}:")), None)
            if failing is None:
                raise
            why[failing.name] = str(exc)
            concepts.remove(failing)
    return None, why


def atlas(adapter, untrained, settings: AtlasSettings, progress: Callable[[int, int], None]) -> dict:
    """The atlas's JSON: ``points``, ``concepts`` (the probe command's entries, or {"why"}), ``probes``
    ({concept: [linear map or None per point]}) and ``per_square``."""
    from analysis.probes.fit import FitConfig
    from analysis.probes.run import RunConfig, features, probe_network

    data, why = balanced_data(settings.concepts, settings)
    points = list(adapter.readouts)
    out = {"points": points, "concepts": {name: {"why": text} for name, text in why.items()}, "probes": {},
           "settings": {"positions": settings.positions, "seed": settings.seed, "components": settings.components}}
    if data is None:
        return out
    config = RunConfig(components=settings.components, fit=FitConfig(bootstrap=settings.bootstrap, seed=settings.seed))
    counter = Counter(2 * len(points) + 3, progress)
    result, trained, acts = probe_network(adapter, untrained, data, config, settings.seed, counter, keep=True)
    out["per_square"] = acts.per_square
    for k in range(len(points)):
        pca = None if acts.per_square and all(
            data.sets[n].concept.kind == "square" for n in trained) else features(acts.point(k), config, settings.seed)[1]
        for name, probes in trained.items():
            probe = probes[k]
            square = data.sets[name].concept.kind == "square"
            kept = None if probe is None else maps.pack(*maps.compose(probe.model, None if square else pca))
            out["probes"].setdefault(name, []).append(kept)
    for name in settings.concepts:
        if name in result["concepts"]:
            out["concepts"][name] = result["concepts"][name]
    out["concepts"] = {name: out["concepts"][name] for name in settings.concepts if name in out["concepts"]}
    counter("stored")
    return out


def position_scores(adapter, stored: dict, board: chess.Board) -> dict:
    """The Concepts panel for ``board``: per concept its score at every point (a binary or square
    concept's probability, a regression's prediction), the true label, and a square concept's map
    per point (64 probabilities, a1 first, None off the candidate squares)."""
    from analysis.probes.activations import collect
    from analysis.probes.concepts import get_concept

    if not any(board.legal_moves):
        raise ValueError("the position has no legal move: the network reads no position without one")
    acts = collect(adapter, [board], batch=1)
    rows = []
    for name, entry in stored["concepts"].items():
        concept = get_concept(name)
        label = concept.label(board)
        row = {"name": name, "kind": concept.kind, "about": concept.about, "best_point": entry.get("best_point"),
               "why": entry.get("why"), "strip": [None] * len(stored["points"])}
        probes = stored["probes"].get(name)
        if concept.kind == "square":
            candidates = np.isfinite(label)
            row["label"] = [None if not c else float(v) for c, v in zip(candidates, label)]
            row["squares"] = [None] * len(stored["points"])
        else:
            row["label"] = None if not np.isfinite(label) else float(label)
        for k, probe in enumerate(probes or []):
            if probe is None:
                continue
            raw = maps.raw_score(probe, acts.point(k)[0])
            if concept.kind == "square":
                prob = maps.sigmoid(raw)
                row["squares"][k] = [round(float(p), 4) if c else None for p, c in zip(prob, candidates)]
                row["strip"][k] = round(float(prob[candidates].max()), 4) if candidates.any() else None
            elif concept.kind == "binary":
                row["strip"][k] = round(float(maps.sigmoid(raw[0])), 4)
            else:
                row["strip"][k] = round(float(raw[0]), 4)
        rows.append(row)
    return {"points": stored["points"], "concepts": rows}
