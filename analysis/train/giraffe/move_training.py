"""Section 6: train the move evaluator to give P(best move).

Positions are sampled from searches: each root (a game position with one random move) and
one position inside its search, on the principal variation a random number of plies deep.
Each is labelled with the best move of a deeper probability-limited search with the trained
evaluator (the paper's procedure; not Stockfish). Loss: binary cross-entropy of every legal
move's P(best), target 1 for the label (reference code).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Sequence

import chess
import numpy as np
import torch

from analysis.encoding.giraffe import encode
from analysis.encoding.giraffe.features import BOARD_FEATURES
from analysis.encoding.giraffe.moves import MAX_MOVES, MOVE_FEATURES
from analysis.evaluator import Evaluator
from analysis.models.giraffe.losses import GiraffeLossWeights, giraffe_losses
from analysis.train.giraffe.config import MoveConfig
from analysis.train.giraffe.tdleaf import make_search, pv_leaf
from analysis.search import Budget


@dataclass
class LabelledPositions:
    inputs: torch.Tensor  # (N, INPUT_SIZE) giraffe-363 rows
    best: torch.Tensor  # (N,) index of the labelled move among the legal moves

    def __len__(self) -> int:
        return len(self.best)


def sample_search_positions(evaluator: Evaluator, roots: Sequence[chess.Board], nodes: int,
                            rng: random.Random, max_qdepth: int = 16) -> list[chess.Board]:
    """Each root, and a position on its search's principal variation (when the PV has one)."""
    search = make_search(evaluator, max_qdepth)
    out = []
    for root in roots:
        out.append(root)
        pv = search.run(root, Budget(nodes=nodes)).pv
        if len(pv) > 1:
            inner = pv_leaf(root, pv[:rng.randint(1, len(pv) - 1)])
            if not inner.is_game_over(claim_draw=False):
                out.append(inner)
    return out


def label_positions(evaluator: Evaluator, boards: Sequence[chess.Board], nodes: int,
                    tick: Callable[[], None] | None = None, max_qdepth: int = 16) -> LabelledPositions:
    search = make_search(evaluator, max_qdepth)
    rows, best = [], []
    for board in boards:
        move = search.run(board, Budget(nodes=nodes)).best_move
        if move is not None:
            rows.append(encode([board])[0])
            best.append(list(board.legal_moves).index(move))
        if tick is not None:
            tick()
    return LabelledPositions(torch.from_numpy(np.stack(rows)), torch.tensor(best))


def legal_mask(inputs: torch.Tensor) -> torch.Tensor:
    return inputs[:, BOARD_FEATURES:].view(-1, MAX_MOVES, MOVE_FEATURES)[..., 0] > 0.5


def move_loss(model: torch.nn.Module, inputs: torch.Tensor, best: torch.Tensor) -> torch.Tensor:
    out = model(inputs)
    batch = {"best": best, "legal": legal_mask(inputs)}
    return giraffe_losses(out, batch, GiraffeLossWeights(value=0.0))["total"]  # both passes' BCE


@torch.no_grad()
def top1_accuracy(model: torch.nn.Module, data: LabelledPositions) -> float:
    return float((model(data.inputs)["policy"].argmax(dim=-1) == data.best).float().mean())


def train_move_evaluator(model: torch.nn.Module, optimizer: torch.optim.Optimizer, data: LabelledPositions,
                         config: MoveConfig, rng: torch.Generator,
                         log: Callable[[dict], None] = lambda row: None) -> list[dict]:
    rows = []
    for epoch in range(1, config.epochs + 1):
        order = torch.randperm(len(data), generator=rng)
        total = 0.0
        model.train()
        for start in range(0, len(order), config.batch_size):
            idx = order[start:start + config.batch_size]
            loss = move_loss(model, data.inputs[idx], data.best[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(idx)
        model.eval()
        row = {"epoch": epoch, "bce": total / len(data), "top1": top1_accuracy(model, data)}
        rows.append(row)
        log(row)
    return rows
