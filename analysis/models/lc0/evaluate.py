"""Boards in, lc0 network answers out: legal-move policy, WDL, moves left, attention maps in real squares.

Encodes each board in the network's input format, runs the network once per
batch, maps policy indices back through the canonical transform, and
reorders attention maps from the network's frame to real squares
(a1 = 0 ... h8 = 63, query square first).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import chess
import numpy as np
import torch
from torch import nn

from analysis.encoding.lc0_formats import encode_boards, move_indices, square_map


@dataclass
class Lc0Answer:
    policy: dict[chess.Move, float]  # legal moves only, sums to 1
    wdl: tuple[float, float, float]  # side to move's win, draw, loss ((1+q)/2, 0, (1-q)/2 for a tanh head, as lc0)
    q: float
    moves_left: float  # 0 without a moves-left head, as lc0
    logits: np.ndarray  # (1858,) raw, network frame
    attention: np.ndarray | None = None  # (layers, heads, 64, 64), real squares


def to_real_squares(maps: np.ndarray, board: chess.Board, transform: int) -> np.ndarray:
    """Reorder (..., 64, 64) maps from the network's frame to real squares."""
    where = square_map(board, transform)  # real square -> network square
    return maps[..., where[:, None], where[None, :]]


@torch.no_grad()
def evaluate_boards(model: nn.Module, boards: Sequence[chess.Board], *, attention: bool = False,
                    temperature: float = 1.0, device: str | torch.device = "cpu") -> list[Lc0Answer]:
    planes, encoded = encode_boards(boards, model.config.input_format)
    want_maps = attention and hasattr(model, "encoders")
    out = model(torch.from_numpy(planes).transpose(1, 2).to(device), need_attention=want_maps)
    out = {k: v.float().cpu().numpy() for k, v in out.items()}
    answers = []
    for i, board in enumerate(boards):
        moves = list(board.legal_moves)
        policy: dict[chess.Move, float] = {}
        if moves:
            chosen = out["policy"][i][move_indices(board, moves, encoded[i].transform)] / temperature
            probs = np.exp(chosen - chosen.max())
            policy = dict(zip(moves, (probs / probs.sum()).tolist()))
        maps = to_real_squares(out["attention"][i], board, encoded[i].transform) if want_maps else None
        q = float(out["q"][i])
        wdl = tuple(float(x) for x in out["wdl"][i]) if "wdl" in out else ((1 + q) / 2, 0.0, (1 - q) / 2)
        answers.append(Lc0Answer(policy=policy, wdl=wdl, q=q, moves_left=float(out["m"][i]) if "m" in out else 0.0,
                                 logits=out["policy"][i], attention=maps))
    return answers
