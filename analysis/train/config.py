"""Typed training configuration, loaded from a TOML file under configs/."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from pathlib import Path

from analysis.models import DEFAULT_FAMILY, get_family
from analysis.tomlconfig import check_settings, read_toml


@dataclass
class TrainConfig:
    """One training run. Paths in the TOML file are relative to the repository root (cwd)."""

    data: Path  # dataset directory (analysis.data.store layout)
    out: Path  # run directory: state, curves, exported checkpoint
    extra_data: list = field(default_factory=list)  # more dataset directories whose rows join both splits
    family: str = DEFAULT_FAMILY  # a registered model family (analysis.models.FAMILIES)
    model: str = "cf-small"  # one of the family's presets
    model_overrides: dict = field(default_factory=dict)
    export: Path | None = None  # where the final SWA weights go (default: out/model.safetensors)
    # Start from a trained checkpoint's weights (fine-tuning) instead of a fresh initialisation.
    # Its architecture must equal model + model_overrides; a resumed run ignores it.
    init_from: Path | None = None
    steps: int = 1000
    max_wall_minutes: float | None = None  # stop early (and export) when the run has used this much time
    batch_size: int = 256
    # Learning-rate steps, Chessformer style: [[0, 5e-4], [1600, 1.58e-4], ...] = (from step, lr).
    lr_steps: list = field(default_factory=lambda: [[0, 5e-4]])
    # "steps": lr_steps and swa_start count optimiser steps. "progress": they are fractions
    # of the run, where progress = max(step / steps, elapsed / max_wall_minutes), so a
    # time-budgeted run on a shared machine still anneals and averages before it stops.
    schedule: str = "steps"
    warmup_steps: int = 0
    optimizer: str = "nadam"  # nadam (Chessformer section III) | adam (ChessBench)
    betas: tuple = (0.9, 0.98)  # Nadam, Chessformer section III
    eps: float = 1e-7
    weight_decay: float = 0.0
    grad_clip: float = 10.0
    swa_start: float = 0  # first step (or run fraction) whose weights enter the average
    swa_every: int = 10
    # With a decay (ChessBench: 0.99), the exported average is an exponential moving average of
    # the parameters (updated as SWA would be: from swa_start, every swa_every steps), not SWA.
    ema_decay: float | None = None
    policy_temperature: float = 0.02  # softmax over Stockfish win probabilities -> policy target
    # WDL head target: "win" keeps Stockfish's draw share but matches W + D/2 to the win
    # probability the q head learns; "stockfish" is Stockfish's own (steeper) WDL.
    wdl_target: str = "stockfish"
    fen_only_share: float = 0.0  # share of training rows packed from their FEN alone (history dropout)
    # Share of training rows given as their colour mirror (lc0 planes: plane 108, "black to move",
    # toggled; AlphaGateau: analysis.models.alphagateau.data).
    colour_flip_share: float = 0.0
    # A position corpus's top k moves as state-value samples of their own (training rows only): the
    # position after each move, valued 1 - the move's win probability. Only a loader that values
    # positions from FENs takes it (ChessBench's state value); 0: the corpus rows alone.
    corpus_children: int = 0
    loss: Any = None  # the family's loss weights (its ``loss_weights`` type); None: its defaults
    val_every: int = 100
    val_batches: int = 8
    checkpoint_every: int = 500
    # Every N steps also export the weights an export would take (the average once it has begun)
    # to out/snapshots/step-NNNNNN.safetensors: the learning curve's points (puzzles against positions seen).
    snapshot_every: int | None = None
    log_every: int = 10
    device: str = "auto"  # auto | cpu | cuda
    amp: str = "auto"  # bf16 autocast: auto (CUDA only) | on | off
    compile: bool = False
    num_workers: int = 1
    threads: int = 0  # torch CPU threads; 0 leaves torch's default
    seed: int = 0
    max_train_rows: int | None = None

    def __post_init__(self) -> None:
        if self.loss is None:
            self.loss = get_family(self.family).loss_weights()

    @property
    def datasets(self) -> list[Path]:
        return [self.data, *self.extra_data]

    @property
    def export_path(self) -> Path:
        return self.export or self.out / "model.safetensors"

    def progress(self, step: int, elapsed_s: float) -> float:
        done = step / self.steps
        if self.max_wall_minutes:
            done = max(done, elapsed_s / (60 * self.max_wall_minutes))
        return done

    def lr_at(self, step: int, elapsed_s: float = 0.0) -> float:
        where = self.progress(step, elapsed_s) if self.schedule == "progress" else step
        lr = self.lr_steps[0][1]
        for start, value in self.lr_steps:
            if where >= start:
                lr = value
        if self.warmup_steps and step < self.warmup_steps:
            lr *= (step + 1) / self.warmup_steps
        return float(lr)

    def swa_active(self, step: int, elapsed_s: float) -> bool:
        where = self.progress(step, elapsed_s) if self.schedule == "progress" else step
        return where >= self.swa_start

    def validate(self) -> None:
        if self.schedule not in ("steps", "progress"):
            raise ValueError(f"schedule must be steps or progress, not {self.schedule!r}")
        if self.schedule == "progress" and not all(0 <= s[0] <= 1 for s in self.lr_steps):
            raise ValueError("with schedule = 'progress', lr_steps start at fractions in [0, 1]")
        if self.steps <= 0 or self.batch_size <= 0:
            raise ValueError("steps and batch_size must be positive")
        if not self.lr_steps or any(len(s) != 2 for s in self.lr_steps):
            raise ValueError("lr_steps must be a non-empty list of [step, lr] pairs")
        if self.device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"device must be auto, cpu or cuda, not {self.device!r}")
        if self.amp not in ("auto", "on", "off"):
            raise ValueError(f"amp must be auto, on or off, not {self.amp!r}")
        if self.wdl_target not in ("win", "stockfish"):
            raise ValueError(f"wdl_target must be win or stockfish, not {self.wdl_target!r}")
        if not (0 <= self.fen_only_share <= 1 and 0 <= self.colour_flip_share <= 1):
            raise ValueError("fen_only_share and colour_flip_share must be in [0, 1]")
        if self.corpus_children < 0:
            raise ValueError("corpus_children must be >= 0")
        if self.optimizer not in ("nadam", "adam"):
            raise ValueError(f"optimizer must be nadam or adam, not {self.optimizer!r}")
        if self.ema_decay is not None and not 0 < self.ema_decay < 1:
            raise ValueError("ema_decay must be in (0, 1)")
        if self.swa_every <= 0 or self.checkpoint_every <= 0 or self.val_every <= 0:
            raise ValueError("swa_every, checkpoint_every and val_every must be positive")
        if self.snapshot_every is not None and self.snapshot_every <= 0:
            raise ValueError("snapshot_every must be positive")


def load_config(path: Path, **overrides) -> TrainConfig:
    """Parse a TOML config; ``overrides`` (e.g. from the CLI) win over the file."""
    raw = read_toml(path, overrides)
    check_settings(raw, TrainConfig, path, required=("data", "out"))
    raw["data"], raw["out"] = Path(raw["data"]), Path(raw["out"])
    raw["extra_data"] = [Path(p) for p in raw.get("extra_data", [])]
    for key in ("export", "init_from"):
        if raw.get(key):
            raw[key] = Path(raw[key])
    if "betas" in raw:
        raw["betas"] = tuple(raw["betas"])
    try:
        family = get_family(raw.get("family", TrainConfig.family))
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    try:
        raw["loss"] = family.loss_weights(**raw.get("loss", {}))
    except TypeError as exc:
        raise ValueError(f"{path}: bad [loss] table: {exc}") from None
    cfg = TrainConfig(**raw)
    cfg.validate()
    return cfg
