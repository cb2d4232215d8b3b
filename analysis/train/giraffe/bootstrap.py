"""Section 4.4: fit the evaluator to a material-only evaluation (squared error, as the code),
or, as an option the paper did not take, to Stockfish's win probabilities."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Callable

import chess
import torch

from analysis.train.giraffe.config import BootstrapConfig
from analysis.train.giraffe.material import material_value
from analysis.train.giraffe.positions import sample_roots
from analysis.train.giraffe.value_evaluator import features_tensor


def bootstrap_data(fens: list[str], count: int, rng: random.Random) -> tuple[torch.Tensor, torch.Tensor]:
    """(features (N, 363), material targets (N,)) on perturbed game positions."""
    boards = sample_roots(fens, count, rng)
    return features_tensor(boards), torch.tensor([material_value(b) for b in boards], dtype=torch.float32)


def stockfish_data(root: Path, count: int, rng: random.Random) -> tuple[torch.Tensor, torch.Tensor]:
    """(features (N, 363), targets (N,)): up to ``count`` train positions of the annotated dataset
    at ``root``, each with Stockfish's win probability for the side to move as 2 x win - 1."""
    from analysis.data.store import read_annotated

    table = read_annotated(Path(root), columns=["fen", "win"], split="train")
    rows = [(fen, win) for fen, win in zip(table["fen"].to_pylist(), table["win"].to_pylist()) if win is not None]
    if not rows:
        raise ValueError(f"{root}: no annotated train positions with a win probability")
    rows = rng.sample(rows, min(count, len(rows)))
    boards = [chess.Board(fen) for fen, _ in rows]
    return features_tensor(boards), torch.tensor([2.0 * win - 1.0 for _, win in rows], dtype=torch.float32)


def run_bootstrap(model: torch.nn.Module, optimizer: torch.optim.Optimizer, features: torch.Tensor,
                  targets: torch.Tensor, config: BootstrapConfig, rng: torch.Generator,
                  log: Callable[[dict], None] = lambda row: None) -> list[dict]:
    """``config.epochs`` passes of minibatch L2 on the evaluator; one row per epoch."""
    rows = []
    for epoch in range(1, config.epochs + 1):
        order = torch.randperm(len(targets), generator=rng)
        total, seen = 0.0, 0
        for start in range(0, len(order), config.batch_size):
            idx = order[start:start + config.batch_size]
            loss = ((model.evaluator(features[idx]) - targets[idx]) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(idx)
            seen += len(idx)
        row = {"epoch": epoch, "mse": total / seen}
        rows.append(row)
        log(row)
    return rows


@torch.no_grad()
def material_error(model: torch.nn.Module, features: torch.Tensor, targets: torch.Tensor) -> float:
    """Mean squared error against the bootstrap's targets (material or Stockfish)."""
    return float(((model.evaluator(features) - targets) ** 2).mean())
