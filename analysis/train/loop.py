"""The supervised training loop: Nadam (or Adam), clipping, LR steps, SWA (or EMA) export, resume, DDP.

Run it as ``python -m analysis train --config configs/FILE.toml``; for
several GPUs, ``torchrun --nproc_per_node N -m analysis train --config ...``
(each rank reads a disjoint share of every epoch; rank 0 writes files).
"""

from __future__ import annotations

import copy
import json
import math
import os
import platform
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
from tqdm import tqdm

from analysis.checkpoint import load_checkpoint, save_checkpoint
from analysis.data.store import read_card
from analysis.models import get_family
from analysis.train.config import TrainConfig
from analysis.train.dataset import EpochBatches, PositionDataset
from analysis.train.plots import plot_curves

STATE_FILE = "state.pt"
HISTORY_FILE = "history.json"


def _distributed() -> tuple[int, int, int]:
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1 and not dist.is_initialized():
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    rank = dist.get_rank() if world > 1 else 0
    local = int(os.environ.get("LOCAL_RANK", "0"))
    return rank, world, local


def _device(cfg: TrainConfig, local_rank: int) -> torch.device:
    if cfg.device == "cuda" or (cfg.device == "auto" and torch.cuda.is_available()):
        if not torch.cuda.is_available():
            raise ValueError("device = 'cuda' but CUDA is not available")
        torch.cuda.set_device(local_rank)
        return torch.device("cuda", local_rank)
    return torch.device("cpu")


def _hardware(device: torch.device, world: int) -> str:
    if device.type == "cuda":
        return f"{world} x {torch.cuda.get_device_name(device)}"
    return f"CPU ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"


_OPTIMIZERS = {"nadam": torch.optim.NAdam, "adam": torch.optim.Adam}


def training_dataset(family, cfg: TrainConfig, split: str, model_config):
    """The family's training data for ``split`` (its own loader, else the lc0-plane rows)."""
    training = split == "train"  # augmentations and the row cap are for training rows only
    if family.dataset is not None:
        options = {"corpus_children": cfg.corpus_children} if cfg.corpus_children and training else {}
        return family.dataset(cfg.datasets, split, model_config,
                              max_rows=cfg.max_train_rows if training else None,
                              policy_temperature=cfg.policy_temperature,
                              fen_only_share=cfg.fen_only_share if training else 0.0,
                              colour_flip_share=cfg.colour_flip_share if training else 0.0, seed=cfg.seed,
                              **options)
    if cfg.corpus_children:
        raise ValueError("corpus_children adds state-value samples: the lc0-plane loader trains a policy too")
    if training:
        return PositionDataset(cfg.datasets, "train", policy_temperature=cfg.policy_temperature,
                               max_rows=cfg.max_train_rows, wdl_target=cfg.wdl_target,
                               fen_only_share=cfg.fen_only_share, colour_flip_share=cfg.colour_flip_share,
                               seed=cfg.seed)
    return PositionDataset(cfg.datasets, "test", policy_temperature=cfg.policy_temperature,
                           wdl_target=cfg.wdl_target)


def _loader(dataset: PositionDataset, sampler: EpochBatches, workers: int, device: torch.device):
    return torch.utils.data.DataLoader(
        dataset, sampler=sampler, batch_size=None, num_workers=workers,
        pin_memory=device.type == "cuda", persistent_workers=workers > 0,
        prefetch_factor=4 if workers > 0 else None,
    )


def _to(batch: dict, device: torch.device) -> dict:
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


@torch.no_grad()
def _validate(model, batches, device, autocast, cfg) -> dict[str, float]:
    model.eval()
    sums: dict[str, float] = {}
    for batch in batches:
        batch = _to(batch, device)
        with autocast():
            out = model(batch["tokens"])
        for k, v in get_family(cfg.family).losses(out, batch, cfg.loss).items():
            sums[k] = sums.get(k, 0.0) + float(v)
        if "policy" in out and "legal" in batch:
            top = out["policy"].float().masked_fill(~batch["legal"], float("-inf")).argmax(-1)
            sums["policy_top1"] = sums.get("policy_top1", 0.0) + float(
                (batch["policy"].gather(1, top[:, None]).squeeze(1) >= batch["policy"].max(-1).values).float().mean())
    model.train()
    return {k: v / max(1, len(batches)) for k, v in sums.items()}


def _initialise_from(model: torch.nn.Module, path: Path) -> dict:
    """Copy a checkpoint's weights into ``model``; returns what the export records about them."""
    source, meta = load_checkpoint(path, family=model.family)
    family = get_family(model.family)
    if family.weights_config(source.config) != family.weights_config(model.config):
        raise ValueError(f"init_from {path}: its config {source.config} differs from the run's {model.config}")
    model.load_state_dict(source.state_dict())
    earlier = meta.provenance or {}
    return {"path": str(path), "trained": meta.trained, "steps": earlier.get("steps"),
            "wall_seconds": earlier.get("wall_seconds"), "hardware": earlier.get("hardware"), "data": earlier.get("data"),
            "init_from": earlier.get("init_from"), "config": asdict(source.config),
            **({"selfplay": earlier["selfplay"]} if "selfplay" in earlier else {}),
            **({"board_sizes": earlier["board_sizes"]} if "board_sizes" in earlier else {})}


def train(cfg: TrainConfig, *, progress: bool = True) -> Path:
    """Train (or resume) the run in ``cfg.out``; returns the exported checkpoint path."""
    rank, world, local_rank = _distributed()
    device = _device(cfg, local_rank)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed + rank)
    family = get_family(cfg.family)
    model_config = family.preset(cfg.model, **cfg.model_overrides)
    train_set = training_dataset(family, cfg, "train", model_config)
    val_set, val_batches = _validation(family, cfg, model_config)
    run = _Run.start(cfg, family, model_config, device, rank)
    net = _parallel(run.model, cfg, world, local_rank, device)
    sampler = EpochBatches(len(train_set), cfg.batch_size, seed=cfg.seed, rank=rank, world=world,
                           start_batch=run.step)
    run.steps(net, iter(_loader(train_set, sampler, cfg.num_workers, device)), val_batches, progress)

    export = cfg.export_path
    if rank == 0:
        final = run.exported_model()
        provenance = _provenance(cfg, run, len(train_set), len(val_set) if val_set is not None else 0, world)
        if run.init_provenance is not None:
            provenance["init_from"] = run.init_provenance
        if family.training_provenance is not None:
            provenance.update(family.training_provenance(model_config, run.init_provenance))
        save_checkpoint(export, final.to("cpu"), trained=True, provenance=provenance)
        plot_curves(run.history, export.with_suffix(".loss.png"))
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()
    return export


def _validation(family, cfg: TrainConfig, model_config) -> tuple[Any, list]:
    """The held-out games (validation loss only, never used to pick weights) and the batches scored."""
    try:
        val_set = training_dataset(family, cfg, "test", model_config)
    except ValueError:
        return None, []
    val_idx = np.random.default_rng(cfg.seed).permutation(len(val_set))
    return val_set, [val_set[val_idx[i * cfg.batch_size:(i + 1) * cfg.batch_size]]
                     for i in range(min(cfg.val_batches, math.ceil(len(val_set) / cfg.batch_size)))]


def _parallel(model: torch.nn.Module, cfg: TrainConfig, world: int, local_rank: int, device: torch.device):
    """What the steps run: the model, under DDP with several processes, compiled when asked."""
    net = model
    if world > 1:
        # Heads whose loss weight is 0 (Chessformer's q_cat, st_cat by default) get no gradient.
        unused = any(v == 0 for v in asdict(cfg.loss).values())
        net = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[local_rank] if device.type == "cuda" else None, find_unused_parameters=unused)
    return torch.compile(net) if cfg.compile else net


@dataclass
class _Run:
    """A training run's state: the model, its optimizer and averaged copy, the step and the history."""

    cfg: TrainConfig
    family: Any
    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    swa: torch.optim.swa_utils.AveragedModel
    device: torch.device
    rank: int
    use_amp: bool
    init_provenance: dict | None
    step: int = 0
    elapsed: float = 0.0
    history: dict = field(default_factory=lambda: {"train": [], "val": []})
    started: float = 0.0

    @classmethod
    def start(cls, cfg: TrainConfig, family, model_config, device: torch.device, rank: int) -> "_Run":
        """A new run, or the one saved in ``cfg.out`` resumed."""
        model = family.build(model_config)
        init_provenance = _initialise_from(model, cfg.init_from) if cfg.init_from else None
        model = model.to(device)
        optimizer = _OPTIMIZERS[cfg.optimizer](model.parameters(), lr=cfg.lr_at(0), betas=tuple(cfg.betas),
                                               eps=cfg.eps, weight_decay=cfg.weight_decay)
        # The exported weights: SWA's equal-weight average, or with ema_decay an exponential moving average.
        swa = torch.optim.swa_utils.AveragedModel(
            model, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(cfg.ema_decay) if cfg.ema_decay else None)
        use_amp = cfg.amp == "on" or (cfg.amp == "auto" and device.type == "cuda")
        run = cls(cfg, family, model, optimizer, swa, device, rank, use_amp, init_provenance)
        cfg.out.mkdir(parents=True, exist_ok=True)
        if run.state_path.exists():
            state = torch.load(run.state_path, map_location=device, weights_only=False)
            model.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            swa.load_state_dict(state["swa"])
            run.step, run.elapsed, run.history = state["step"], state["elapsed"], state["history"]
            torch.set_rng_state(state["torch_rng"])
        return run

    @property
    def state_path(self) -> Path:
        return self.cfg.out / STATE_FILE

    def autocast(self):
        return torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.use_amp)

    def save_state(self) -> None:
        if self.rank != 0:
            return
        tmp = self.state_path.with_name(STATE_FILE + ".tmp")
        torch.save({"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                    "swa": self.swa.state_dict(), "step": self.step, "elapsed": time.time() - self.started,
                    "history": self.history, "torch_rng": torch.get_rng_state(), "config": repr(self.cfg)}, tmp)
        os.replace(tmp, self.state_path)
        (self.cfg.out / HISTORY_FILE).write_text(json.dumps(self.history))
        plot_curves(self.history, self.cfg.out / "loss_curves.png")

    def exported_model(self) -> torch.nn.Module:
        """What an export takes: the weight average once it has begun, else the current weights."""
        return self.swa.module if self.swa.n_averaged.item() > 0 else self.model

    def save_snapshot(self) -> Path | None:
        """The weights an export would take now, for the learning curve; returns where they went."""
        if self.rank != 0:
            return None
        source = self.exported_model()
        path = self.cfg.out / "snapshots" / f"step-{self.step:06d}.safetensors"
        path.parent.mkdir(exist_ok=True)
        world = dist.get_world_size() if dist.is_initialized() else 1
        save_checkpoint(path, copy.deepcopy(source).to("cpu"), trained=True, provenance={
            "snapshot_of": str(self.cfg.out), "steps": self.step, "averaged": source is not self.model,
            "positions_seen": self.step * self.cfg.batch_size * world, "init_from": self.init_provenance})
        return path

    def steps(self, net, batches, val_batches: list, progress: bool) -> None:
        """Optimizer steps up to ``cfg.steps`` (or the wall-clock limit), logging, validating and saving."""
        cfg = self.cfg
        bar = tqdm(total=cfg.steps, initial=self.step, desc="training", unit="step",
                   disable=not progress or self.rank != 0)
        window: dict[str, float] = {}
        self.started = time.time() - self.elapsed
        net.train()
        while self.step < cfg.steps:
            lr, terms, grad_norm = self._step(net, next(batches))
            for k, v in terms.items():
                window[k] = window.get(k, 0.0) + float(v.detach())
            window["_n"] = window.get("_n", 0) + 1
            if self.step % cfg.log_every == 0 or self.step == cfg.steps:
                row = self._log(lr, grad_norm, window)
                window = {}
                bar.set_postfix(loss=f"{row['total']:.3f}", **({"pol": f"{row['policy']:.3f}"} if "policy" in row else {}))
            if self.rank == 0 and val_batches and (self.step % cfg.val_every == 0 or self.step == cfg.steps):
                self._validate(val_batches)
            out_of_time = cfg.max_wall_minutes is not None and time.time() - self.started > 60 * cfg.max_wall_minutes
            if self.step % cfg.checkpoint_every == 0 or self.step == cfg.steps or out_of_time:
                self.save_state()
            if cfg.snapshot_every and self.step % cfg.snapshot_every == 0:
                self.save_snapshot()
            bar.update(1)
            if out_of_time:
                if self.rank == 0 and val_batches and (not self.history["val"]
                                                       or self.history["val"][-1]["step"] != self.step):
                    self._validate(val_batches)
                break
        bar.close()

    def _step(self, net, batch: dict) -> tuple[float, dict, torch.Tensor]:
        """One optimizer step (and the averaged model's update when due); (lr, loss terms, gradient norm)."""
        cfg = self.cfg
        lr = cfg.lr_at(self.step, time.time() - self.started)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        batch = _to(batch, self.device)
        with self.autocast():
            out = net(batch["tokens"])
        terms = self.family.losses(out, batch, cfg.loss)
        self.optimizer.zero_grad(set_to_none=True)
        terms["total"].backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.grad_clip)
        self.optimizer.step()
        self.step += 1
        if cfg.swa_active(self.step, time.time() - self.started) and self.step % cfg.swa_every == 0:
            self.swa.update_parameters(self.model)
        return lr, terms, grad_norm

    def _log(self, lr: float, grad_norm: torch.Tensor, window: dict[str, float]) -> dict:
        n = window.pop("_n")
        row = {"step": self.step, "lr": lr, "grad_norm": float(grad_norm), **{k: v / n for k, v in window.items()}}
        self.history["train"].append(row)
        return row

    def _validate(self, val_batches: list) -> None:
        self.history["val"].append({"step": self.step, **_validate(self.model, val_batches, self.device,
                                                                   self.autocast, self.cfg)})


def _provenance(cfg: TrainConfig, run: _Run, train_rows: int, test_rows: int, world: int) -> dict:
    """What the exported checkpoint records about its training."""
    return {
        "data": str(cfg.data), "data_card": read_card(cfg.data), "train_rows": train_rows,
        "extra_data": {str(p): read_card(p) for p in cfg.extra_data},
        "test_rows": test_rows, "steps": run.step, "batch_size": cfg.batch_size, "world_size": world,
        "wall_seconds": round(time.time() - run.started, 1), "hardware": _hardware(run.device, world),
        "torch": torch.__version__, "preset": cfg.model, "parameters": sum(p.numel() for p in run.model.parameters()),
        "optimizer": {"nadam": "Nadam", "adam": "Adam"}[cfg.optimizer],
        "betas": list(cfg.betas), "eps": cfg.eps, "grad_clip": cfg.grad_clip, "lr_steps": cfg.lr_steps,
        "schedule": cfg.schedule,
        "swa": {"start": cfg.swa_start, "every": cfg.swa_every, "averaged": int(run.swa.n_averaged.item()),
                **({"ema_decay": cfg.ema_decay} if cfg.ema_decay else {})},
        "loss_weights": asdict(cfg.loss), "policy_temperature": cfg.policy_temperature,
        "wdl_target": cfg.wdl_target, "fen_only_share": cfg.fen_only_share,
        "colour_flip_share": cfg.colour_flip_share,
        "final_val": run.history["val"][-1] if run.history["val"] else {}, "amp_bf16": run.use_amp,
        "planned_steps": cfg.steps, "stopped_by_time_limit": run.step < cfg.steps,
    }
