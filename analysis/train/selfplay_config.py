"""Settings of a self-play run (``python -m analysis selfplay``), read from TOML.

Defaults are the AlphaGateau paper's where it gives them (Adam 1e-3, batch
256, Gumbel MuZero with 128 simulations and 16 considered actions, 256 games
an iteration, a 1M-position window, one pass over the window an iteration);
the configs in ``configs/`` shrink them for a CPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.tomlconfig import check_settings, read_toml

VARIANTS = {"gardner": 5, "chess": 8}


@dataclass
class SelfPlayConfig:
    out: Path  # run directory: state, history, exported network
    family: str = "alphagateau"
    model: str = "ag-small-gardner"  # a preset of ``family``
    model_overrides: dict[str, Any] = field(default_factory=dict)
    variant: str = "gardner"  # "gardner" (5x5) or "chess" (8x8)
    init_from: Path | None = None  # a checkpoint to start from (the 5x5 -> 8x8 fine-tuning)
    iterations: int = 100
    games_per_iteration: int = 256
    simulations: int = 128
    max_considered_actions: int = 16
    search_batch: int = 32
    max_plies: int | None = None  # None: the variant's limit (pgx: 256 on 5x5, 512 on 8x8)
    window: int = 1_000_000  # replay window, positions
    passes: float = 1.0  # training passes over the window per iteration
    batch_size: int = 256
    lr: float = 1e-3
    max_wall_minutes: float | None = None
    seed: int = 0
    device: str = "auto"
    threads: int | None = None  # torch CPU threads (each worker's, with workers > 1; default 1 there)
    workers: int = 1  # processes playing games side by side (selfplay_workers); 1 plays them here
    export: Path | None = None  # default: out / "network.safetensors"

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, not {self.variant!r}")
        for name in ("iterations", "games_per_iteration", "simulations", "max_considered_actions",
                     "search_batch", "window", "batch_size", "workers"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        if self.max_plies is not None and self.max_plies < 1:
            raise ValueError("max_plies must be positive")
        if self.passes <= 0 or self.lr <= 0:
            raise ValueError("passes and lr must be positive")
        if self.max_wall_minutes is not None and self.max_wall_minutes <= 0:
            raise ValueError("max_wall_minutes must be positive")
        self.out = Path(self.out)
        self.init_from = Path(self.init_from) if self.init_from else None
        self.export = Path(self.export) if self.export else self.out / "network.safetensors"

    @property
    def board_size(self) -> int:
        return VARIANTS[self.variant]

    @property
    def ply_limit(self) -> int:
        return self.max_plies or (256 if self.variant == "gardner" else 512)


def load_selfplay_config(path: Path, **overrides) -> SelfPlayConfig:
    """Parse a TOML file; ``overrides`` that are not None win. ValueError names what is wrong."""
    raw = read_toml(path, overrides)
    check_settings(raw, SelfPlayConfig, path, required=("out",))
    try:
        return SelfPlayConfig(**raw)
    except TypeError as exc:
        raise ValueError(f"{path}: {exc}") from None
