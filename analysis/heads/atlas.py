"""A network's head atlas: every head scored over the position sample, labelled, with a thumbnail.

Works on any ``Evaluator`` whose capabilities offer attention (maps come back in real squares;
``patterns.to_mover_frame`` puts them in the mover's frame). One forward pass per batch of
positions; the scoring is a few matrix products per position, so the network's forward passes
are nearly all of the time.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping, Sequence

import chess
import numpy as np

from analysis.heads.patterns import PATTERNS, masks, support, to_mover_frame
from analysis.heads.sample import load_sample
from analysis.heads.scoring import HeadScores, LabelRule, ScoreAccumulator

ATLAS_VERSION = 2  # 2: the uniform baseline covers only the keys a head can reach
# The thumbnail's query square, d4 in the mover's frame: room for every piece's full move pattern.
THUMBNAIL_QUERY = chess.D4

Progress = Callable[[int, int], None]  # (positions done, positions in all)


@dataclass(frozen=True)
class AtlasConfig:
    """``positions``: how many of the sample's 256 to use (a prefix); ``batch``: per forward pass."""

    positions: int = 256
    batch: int = 8
    rule: LabelRule = field(default_factory=LabelRule)


@dataclass
class HeadMeasurements:
    """Every head's pattern lift and mass, labels and thumbnails, measured over the atlas positions:
    what the site stores (its ``HeadAtlas`` row's data) and the CLI prints; lists, so it is JSON as it stands."""

    layers: int
    heads: int
    labels: list[list[str]]
    lift: dict[str, list[list[float]]]  # pattern -> (layers x heads)
    mass: dict[str, list[list[float]]]
    static: list[list[float]]
    thumbnails: list[list[list[float]]]  # (layers x heads x 64), mean map for THUMBNAIL_QUERY
    positions: int
    rule: dict[str, float]
    thumbnail_query: int = THUMBNAIL_QUERY
    version: int = ATLAS_VERSION

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def cli_dict(self) -> dict[str, Any]:
        """The shape ``python -m analysis heads --json`` prints (issue 12)."""
        return {"layers": self.layers, "heads": self.heads, "labels": self.labels, "lift": self.lift}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "HeadMeasurements":
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})

    def counts(self) -> dict[str, list[int]]:
        """Label -> how many heads carry it in each layer (labels no head carries are left out)."""
        out: dict[str, list[int]] = {}
        for layer, row in enumerate(self.labels):
            for label in row:
                out.setdefault(label, [0] * self.layers)[layer] += 1
        return out


def compute_atlas(evaluator, config: AtlasConfig = AtlasConfig(), progress: Progress | None = None,
                  boards: Sequence[chess.Board] | None = None) -> HeadMeasurements:
    """Score every head of ``evaluator`` over the sample (or ``boards``); ValueError without attention."""
    shape = evaluator.capabilities.attention
    if shape is None:
        raise ValueError(f"{evaluator.name} has no attention maps, so it has no head atlas")
    boards = list(boards) if boards is not None else load_sample(config.positions)
    accumulator = ScoreAccumulator(*shape, reachable=support(evaluator.capabilities.attention_support))
    for start in range(0, len(boards), config.batch):
        chunk = boards[start:start + config.batch]
        for board, evaluation in zip(chunk, evaluator.evaluate(chunk, attention=True)):
            accumulator.add(to_mover_frame(evaluation.attention, board), masks(board))
        if progress:
            progress(min(start + config.batch, len(boards)), len(boards))
    return build_atlas(accumulator.scores(), accumulator.mean_row(THUMBNAIL_QUERY), config.rule)


def build_atlas(scores: HeadScores, thumbnails: np.ndarray, rule: LabelRule = LabelRule()) -> HeadMeasurements:
    layers, heads = scores.static.shape
    return HeadMeasurements(layers=layers, heads=heads, labels=scores.labels(rule), lift=_per_pattern(scores.lift),
                     mass=_per_pattern(scores.mass), static=_rounded(scores.static, 3),
                     thumbnails=_rounded(thumbnails, 4), positions=scores.positions, rule=asdict(rule))


def _per_pattern(values: np.ndarray) -> dict[str, list]:
    """(L, H, P) -> {pattern: L x H lists}."""
    return {name: _rounded(values[:, :, i], 3) for i, name in enumerate(PATTERNS)}


def _rounded(values: np.ndarray, digits: int) -> list:
    return np.round(values.astype(np.float64), digits).tolist()
