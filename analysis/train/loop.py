"""The supervised training loop: Nadam (or Adam), clipping, LR steps, SWA (or EMA) export, resume, DDP.

Run it as ``python -m analysis train --config configs/FILE.toml``; for
several GPUs, ``torchrun --nproc_per_node N -m analysis train --config ...``
(each rank reads a disjoint share of every epoch; rank 0 writes files).
"""

from __future__ import annotations

import json
import math
import os
import platform
import time
from dataclasses import asdict
from pathlib import Path

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
    if family.dataset is not None:
        training = split == "train"  # augmentations and the row cap are for training rows only
        return family.dataset(cfg.datasets, split, model_config,
                              max_rows=cfg.max_train_rows if training else None,
                              policy_temperature=cfg.policy_temperature,
                              fen_only_share=cfg.fen_only_share if training else 0.0,
                              colour_flip_share=cfg.colour_flip_share if training else 0.0, seed=cfg.seed)
    if split == "train":
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
            "wall_seconds": earlier.get("wall_seconds"), "data": earlier.get("data"),
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
    use_amp = cfg.amp == "on" or (cfg.amp == "auto" and device.type == "cuda")

    def autocast():
        return torch.autocast(device.type, dtype=torch.bfloat16, enabled=use_amp)

    family = get_family(cfg.family)
    model_config = family.preset(cfg.model, **cfg.model_overrides)
    train_set = training_dataset(family, cfg, "train", model_config)
    try:  # the held-out games: validation loss only, never used to pick weights
        val_set = training_dataset(family, cfg, "test", model_config)
    except ValueError:
        val_set = None
    val_batches = []
    if val_set is not None:
        val_idx = np.random.default_rng(cfg.seed).permutation(len(val_set))
        val_batches = [val_set[val_idx[i * cfg.batch_size:(i + 1) * cfg.batch_size]]
                       for i in range(min(cfg.val_batches, math.ceil(len(val_set) / cfg.batch_size)))]

    model = family.build(model_config)
    init_provenance = _initialise_from(model, cfg.init_from) if cfg.init_from else None
    model = model.to(device)
    optimizer = _OPTIMIZERS[cfg.optimizer](model.parameters(), lr=cfg.lr_at(0), betas=tuple(cfg.betas), eps=cfg.eps,
                                           weight_decay=cfg.weight_decay)
    # The exported weights: SWA's equal-weight average, or with ema_decay an exponential moving average.
    swa = torch.optim.swa_utils.AveragedModel(
        model, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(cfg.ema_decay) if cfg.ema_decay else None)
    cfg.out.mkdir(parents=True, exist_ok=True)
    state_path = cfg.out / STATE_FILE
    step, elapsed, history = 0, 0.0, {"train": [], "val": []}
    if state_path.exists():
        state = torch.load(state_path, map_location=device, weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        swa.load_state_dict(state["swa"])
        step, elapsed, history = state["step"], state["elapsed"], state["history"]
        torch.set_rng_state(state["torch_rng"])
    net = model
    if world > 1:
        # Heads whose loss weight is 0 (Chessformer's q_cat, st_cat by default) get no gradient.
        unused = any(v == 0 for v in asdict(cfg.loss).values())
        net = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[local_rank] if device.type == "cuda" else None, find_unused_parameters=unused)
    if cfg.compile:
        net = torch.compile(net)

    sampler = EpochBatches(len(train_set), cfg.batch_size, seed=cfg.seed, rank=rank, world=world, start_batch=step)
    batches = iter(_loader(train_set, sampler, cfg.num_workers, device))
    bar = tqdm(total=cfg.steps, initial=step, desc="training", unit="step", disable=not progress or rank != 0)
    window: dict[str, float] = {}
    started = time.time() - elapsed

    def save_state():
        if rank != 0:
            return
        tmp = state_path.with_name(STATE_FILE + ".tmp")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "swa": swa.state_dict(),
                    "step": step, "elapsed": time.time() - started, "history": history,
                    "torch_rng": torch.get_rng_state(), "config": repr(cfg)}, tmp)
        os.replace(tmp, state_path)
        (cfg.out / HISTORY_FILE).write_text(json.dumps(history))
        plot_curves(history, cfg.out / "loss_curves.png")

    net.train()
    while step < cfg.steps:
        lr = cfg.lr_at(step, time.time() - started)
        for group in optimizer.param_groups:
            group["lr"] = lr
        batch = _to(next(batches), device)
        with autocast():
            out = net(batch["tokens"])
        terms = family.losses(out, batch, cfg.loss)
        optimizer.zero_grad(set_to_none=True)
        terms["total"].backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        optimizer.step()
        step += 1
        if cfg.swa_active(step, time.time() - started) and step % cfg.swa_every == 0:
            swa.update_parameters(model)
        for k, v in terms.items():
            window[k] = window.get(k, 0.0) + float(v.detach())
        window["_n"] = window.get("_n", 0) + 1
        if step % cfg.log_every == 0 or step == cfg.steps:
            n = window.pop("_n")
            row = {"step": step, "lr": lr, "grad_norm": float(grad_norm), **{k: v / n for k, v in window.items()}}
            history["train"].append(row)
            window = {}
            bar.set_postfix(loss=f"{row['total']:.3f}", **({"pol": f"{row['policy']:.3f}"} if "policy" in row else {}))
        if rank == 0 and val_batches and (step % cfg.val_every == 0 or step == cfg.steps):
            history["val"].append({"step": step, **_validate(model, val_batches, device, autocast, cfg)})
        out_of_time = cfg.max_wall_minutes is not None and time.time() - started > 60 * cfg.max_wall_minutes
        if step % cfg.checkpoint_every == 0 or step == cfg.steps or out_of_time:
            save_state()
        bar.update(1)
        if out_of_time:
            if rank == 0 and val_batches and (not history["val"] or history["val"][-1]["step"] != step):
                history["val"].append({"step": step, **_validate(model, val_batches, device, autocast, cfg)})
            break
    bar.close()

    export = cfg.export_path
    if rank == 0:
        final = swa.module if swa.n_averaged.item() > 0 else model
        wall = time.time() - started
        last_val = history["val"][-1] if history["val"] else {}
        provenance = {
            "data": str(cfg.data), "data_card": read_card(cfg.data), "train_rows": len(train_set),
            "extra_data": {str(p): read_card(p) for p in cfg.extra_data},
            "test_rows": len(val_set) if val_set is not None else 0, "steps": step, "batch_size": cfg.batch_size, "world_size": world,
            "wall_seconds": round(wall, 1), "hardware": _hardware(device, world), "torch": torch.__version__,
            "preset": cfg.model, "parameters": sum(p.numel() for p in model.parameters()),
            "optimizer": {"nadam": "Nadam", "adam": "Adam"}[cfg.optimizer],
            "betas": list(cfg.betas), "eps": cfg.eps, "grad_clip": cfg.grad_clip, "lr_steps": cfg.lr_steps, "schedule": cfg.schedule,
            "swa": {"start": cfg.swa_start, "every": cfg.swa_every, "averaged": int(swa.n_averaged.item()),
                    **({"ema_decay": cfg.ema_decay} if cfg.ema_decay else {})},
            "loss_weights": asdict(cfg.loss), "policy_temperature": cfg.policy_temperature,
            "wdl_target": cfg.wdl_target, "fen_only_share": cfg.fen_only_share,
            "colour_flip_share": cfg.colour_flip_share,
            "final_val": last_val, "amp_bf16": use_amp, "planned_steps": cfg.steps,
            "stopped_by_time_limit": step < cfg.steps,
        }
        if init_provenance is not None:
            provenance["init_from"] = init_provenance
        if family.training_provenance is not None:
            provenance.update(family.training_provenance(model_config, init_provenance))
        save_checkpoint(export, final.to("cpu"), trained=True, provenance=provenance)
        plot_curves(history, export.with_suffix(".loss.png"))
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()
    return export
