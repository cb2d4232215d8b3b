"""Self-play training (AlphaZero's loop with Gumbel MuZero, as the AlphaGateau paper trains):
each iteration plays games with the current network, adds their positions to the replay
window, then trains on the window with Adam.

The run directory holds ``state.pt`` (network, optimiser, window, history,
random state; written whole after every iteration, so a stopped run resumes
from its last finished iteration), ``history.json`` (one row per iteration)
and the exported network. ``max_wall_minutes`` ends the run after the game or
step that crosses it; the partial iteration is trained and saved.

The family's ``losses`` take ``policy`` / ``legal`` over its encoding's
vocabulary and ``value`` in [-1, 1] (AlphaGateau's do).
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from analysis.checkpoint import load_checkpoint, save_checkpoint
from analysis.encoding import get_encoding
from analysis.models.inference import TorchEvaluator, resolve_device
from analysis.models import get_family
from analysis.search.gumbel import GumbelMuZero, GumbelSettings
from analysis.train.selfplay_config import SelfPlayConfig
from analysis.train.selfplay_games import ReplayWindow, play_game
from analysis.train.selfplay_workers import GamePool

STATE_FILE = "state.pt"
HISTORY_FILE = "history.json"


def _build(cfg: SelfPlayConfig):
    family = get_family(cfg.family)
    config = family.preset(cfg.model, **cfg.model_overrides)
    if getattr(config, "board", cfg.board_size) != cfg.board_size:  # the network's board follows the variant
        config = family.config({**config.to_dict(), "board": cfg.board_size})
    model = family.build(config)
    boards = {cfg.board_size}
    if cfg.init_from:
        source, meta = load_checkpoint(cfg.init_from, family=family.name)
        model.load_state_dict(source.state_dict())  # same weights whatever the board
        boards |= set((meta.provenance or {}).get("board_sizes") or [getattr(source.config, "board", 8)])
    model.board_sizes = sorted(boards)  # what the exported card says the network was trained on
    return family, model


def _train_steps(model, optimizer, family, window, encoding, policy_size, cfg, rng, device, deadline) -> dict:
    steps = max(1, math.ceil(cfg.passes * len(window) / cfg.batch_size))
    sums: dict[str, float] = {}
    model.train()
    done = 0
    for _ in range(steps):
        picks = rng.integers(0, len(window), size=min(cfg.batch_size, len(window)))
        batch = {k: torch.from_numpy(v).to(device) for k, v in
                 window.batch(picks, encoding, policy_size).items()}
        terms = family.losses(model(batch["inputs"]), batch, family.loss_weights())
        optimizer.zero_grad(set_to_none=True)
        terms["total"].backward()
        optimizer.step()
        for k, v in terms.items():
            sums[k] = sums.get(k, 0.0) + float(v.detach())
        done += 1
        if deadline is not None and time.time() > deadline:
            break
    model.eval()
    return {"steps": done, **{f"loss_{k}": v / done for k, v in sums.items()}}


def selfplay_train(cfg: SelfPlayConfig, *, progress: bool = True) -> Path:
    """Run (or resume) the self-play run in ``cfg.out``; returns the exported network's path."""
    device = resolve_device(None if cfg.device == "auto" else cfg.device)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    family, model = _build(cfg)
    encoding = get_encoding(family.encoding_of(model.config))
    policy_size = len(encoding.vocabulary())
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    window, history, iteration, elapsed = ReplayWindow(cfg.window), [], 0, 0.0
    rng = np.random.default_rng(cfg.seed)
    state_path = cfg.out / STATE_FILE
    if state_path.exists():
        state = torch.load(state_path, map_location=device, weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        window = ReplayWindow.from_state(state["window"])
        history, iteration, elapsed = state["history"], state["iteration"], state["elapsed"]
        rng.bit_generator.state = state["rng"]
    cfg.out.mkdir(parents=True, exist_ok=True)
    started = time.time() - elapsed
    deadline = started + 60 * cfg.max_wall_minutes if cfg.max_wall_minutes else None
    evaluator = TorchEvaluator(model, device=device, encoding=encoding.name)
    pool = GamePool(cfg, model, device) if cfg.workers > 1 else None
    try:
        while iteration < cfg.iterations and (deadline is None or time.time() < deadline):
            games = _games(cfg, model, evaluator, encoding, pool, rng)
            row = _iteration(cfg, model, optimizer, family, games, encoding, policy_size, window, rng,
                             iteration, device, deadline, progress)
            iteration += 1
            row["wall_seconds"] = round(time.time() - started, 1)
            history.append(row)
            _save_state(state_path, model, optimizer, window, history, iteration, time.time() - started, rng, cfg)
    finally:
        if pool is not None:
            pool.close()
    return _export(cfg, model, history, time.time() - started)


def _games(cfg: SelfPlayConfig, model, evaluator, encoding, pool: GamePool | None, rng):
    """This iteration's games, each with its own search seed: in worker processes, or one by one here."""
    seeds = [int(rng.integers(2**31)) for _ in range(cfg.games_per_iteration)]
    if pool is not None:
        return pool.play(model, seeds)
    return (play_game(GumbelMuZero(evaluator, GumbelSettings(
        max_considered_actions=cfg.max_considered_actions, simulations=cfg.simulations,
        batch_size=cfg.search_batch, seed=seed)), encoding, cfg.variant, cfg.simulations, cfg.ply_limit)
        for seed in seeds)


def _iteration(cfg, model, optimizer, family, games, encoding, policy_size, window, rng, iteration,
               device, deadline, progress) -> dict:
    model.eval()
    t0 = time.time()
    results, plies = [], []
    bar = tqdm(total=cfg.games_per_iteration, desc=f"iteration {iteration + 1}", unit="game",
               disable=not progress)
    for game in games:  # played lazily: the deadline stops the iteration between games
        window.add(game)
        results.append(game.result)
        plies.append(len(game.moves))
        bar.update(1)
        bar.set_postfix(positions=len(window), plies=len(game.moves))
        if deadline is not None and time.time() > deadline:
            break
    bar.close()
    t1 = time.time()
    losses = _train_steps(model, optimizer, family, window, encoding, policy_size, cfg, rng, device, deadline)
    if progress:
        print(f"iteration {iteration + 1}: {len(results)} games, window {len(window)} positions, "
              + ", ".join(f"{k} {v:.4f}" for k, v in losses.items() if k.startswith("loss_")), flush=True)
    return {"iteration": iteration + 1, "games": len(results), "positions": int(sum(plies)),
            "window": len(window), "white_wins": results.count(1.0), "draws": results.count(0.0),
            "black_wins": results.count(-1.0), "mean_plies": float(np.mean(plies)),
            "selfplay_seconds": round(t1 - t0, 1), "train_seconds": round(time.time() - t1, 1), **losses}


def _save_state(path: Path, model, optimizer, window, history, iteration, elapsed, rng, cfg) -> None:
    tmp = path.with_name(STATE_FILE + ".tmp")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "window": window.state(),
                "history": history, "iteration": iteration, "elapsed": elapsed, "rng": rng.bit_generator.state,
                "config": repr(cfg)}, tmp)
    os.replace(tmp, path)
    (cfg.out / HISTORY_FILE).write_text(json.dumps(history, indent=1))


def _export(cfg: SelfPlayConfig, model, history: list[dict], wall: float) -> Path:
    games = sum(row["games"] for row in history)
    provenance = {"selfplay": {"variant": cfg.variant, "iterations": len(history), "games": games,
                               "positions": sum(row["positions"] for row in history),
                               "simulations": cfg.simulations, "wall_seconds": round(wall, 1),
                               "init_from": str(cfg.init_from) if cfg.init_from else None},
                  "board_sizes": model.board_sizes}
    return save_checkpoint(cfg.export, model.cpu(), trained=games > 0, provenance=provenance)
