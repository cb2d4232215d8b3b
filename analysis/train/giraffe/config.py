"""Typed configuration of a Giraffe training run, loaded from ``configs/giraffe*.toml``."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from analysis.tomlconfig import read_toml


@dataclass
class PositionsConfig:
    """Training positions (section 4.3): positions of the games in ``pgn`` (files or folders),
    each used with one random legal move applied."""

    pgn: list = field(default_factory=lambda: ["../shared/data/pgn"])
    min_ply: int = 0
    max_positions: int | None = None


@dataclass
class BootstrapConfig:
    """Section 4.4: fit the evaluator to a material-only evaluation."""

    positions: int = 20_000
    epochs: int = 2
    batch_size: int = 256
    # The paper names no optimiser for the bootstrap (AdaDelta is its TD-Leaf optimiser, and the
    # code's bootstrap). AdaDelta at eps 1e-8 barely moves in the few hundred steps a CPU run
    # affords (material MSE 0.055 -> 0.016 in 20 epochs of 5,000 positions, against 0.0017 for
    # Adam), so Adam is the default; "adadelta" uses the run's AdaDelta settings.
    optimizer: str = "adam"
    lr: float = 1e-3
    # "material" is the paper's bootstrap. "stockfish" fits Stockfish's win probabilities from the
    # train split of an annotated dataset (``data``, made by ``generate`` and ``annotate``): the
    # paper mentions this start and chose not to use it; here it is an option measured separately.
    source: str = "material"
    data: str | None = None

    def __post_init__(self):
        if self.optimizer not in ("adam", "adadelta"):
            raise ValueError(f"bootstrap.optimizer must be adam or adadelta, not {self.optimizer!r}")
        if self.source not in ("material", "stockfish"):
            raise ValueError(f"bootstrap.source must be material or stockfish, not {self.source!r}")
        if self.source == "stockfish" and not self.data:
            raise ValueError("bootstrap.source = \"stockfish\" needs bootstrap.data, an annotated dataset directory")


@dataclass
class TDLeafConfig:
    """Section 4.5: per iteration, ``positions`` roots, ``moves`` half-moves of self-play with the
    probability-limited search at ``nodes`` nodes, one AdaDelta step on the L1 TD-Leaf loss."""

    iterations: int = 100
    positions: int = 256
    moves: int = 12
    lambda_: float = 0.7
    nodes: int = 256
    # Quiescence plies after the probability threshold: the shared search plays every capture
    # (Giraffe's code only non-losing ones), which on a slow evaluator can dwarf the node budget.
    max_qdepth: int = 16
    sts_every: int = 0  # 0: no STS during training
    sts_positions: int = 150
    sts_nodes: int = 1000
    sts_epd: str = "../shared/data/suites/sts_v3.epd"


@dataclass
class MoveConfig:
    """Section 6: positions sampled from searches at ``sample_nodes``, labelled with the best move
    of a search at ``label_nodes``, then ``epochs`` passes of binary cross-entropy."""

    positions: int = 2_000
    sample_nodes: int = 256
    label_nodes: int = 4_000
    epochs: int = 20
    batch_size: int = 64
    # As the bootstrap's: AdaDelta at eps 1e-8 only lowered every move's P(best) in 20 epochs of
    # a short run (train top-1 0.0); the paper names no optimiser for the move evaluator.
    optimizer: str = "adam"
    lr: float = 1e-3

    def __post_init__(self):
        if self.optimizer not in ("adam", "adadelta"):
            raise ValueError(f"move.optimizer must be adam or adadelta, not {self.optimizer!r}")


@dataclass
class GiraffeRunConfig:
    out: Path
    model: str = "giraffe-2015"
    seed: int = 0
    threads: int = 1
    max_wall_minutes: float | None = None
    # AdaDelta (Zeiler 2012), the paper's optimiser; lr 1 as section 4.5, rho and eps as the code.
    lr: float = 1.0
    rho: float = 0.99
    eps: float = 1e-8
    positions: PositionsConfig = field(default_factory=PositionsConfig)
    bootstrap: BootstrapConfig = field(default_factory=BootstrapConfig)
    td: TDLeafConfig = field(default_factory=TDLeafConfig)
    move: MoveConfig = field(default_factory=MoveConfig)

    def __post_init__(self):
        self.out = Path(self.out)
        for name, kind in (("positions", PositionsConfig), ("bootstrap", BootstrapConfig), ("td", TDLeafConfig),
                           ("move", MoveConfig)):
            value = getattr(self, name)
            if isinstance(value, dict):
                setattr(self, name, _make(kind, value, name))
        if not 0 < self.td.lambda_ <= 1:
            raise ValueError("td.lambda_ must be in (0, 1]")
        for name, value in (("td.positions", self.td.positions), ("td.moves", self.td.moves),
                            ("td.nodes", self.td.nodes), ("move.label_nodes", self.move.label_nodes),
                            ("bootstrap.batch_size", self.bootstrap.batch_size), ("threads", self.threads)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")


def _make(kind: type, values: dict[str, Any], section: str):
    known = {f.name for f in fields(kind)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"unknown [{section}] setting(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    return kind(**values)


def load_config(path: str | Path, **overrides) -> GiraffeRunConfig:
    """The run config in TOML ``path`` (ValueError naming the bad setting)."""
    data = read_toml(path, overrides)
    if "out" not in data:
        raise ValueError(f"{path}: 'out' (the run directory) is required")
    return _make(GiraffeRunConfig, data, "top level")
