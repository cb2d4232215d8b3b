"""Batched network inference behind the Evaluator API.

One forward pass per ``evaluate`` call, under ``torch.inference_mode``, with
bf16 autocast on CUDA. The device comes from the argument, else the
``SIGHTLINE_DEVICE`` environment variable, else CUDA when present.
"""

from __future__ import annotations

import os
from typing import Hashable, Sequence

import chess
import numpy as np
import torch

from analysis.encoding import legal_move_indices, pack, tokens_from_packed
from analysis.evaluator import Evaluation, NonFiniteOutput, softmax_over_legal, wdl_to_score

# Square t of the mover's frame is real square t ^ 56 when black is to move.
_UNMIRROR = np.arange(64) ^ 56


def resolve_device(device: str | torch.device | None = None) -> torch.device:
    choice = device or os.environ.get("SIGHTLINE_DEVICE") or ("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(choice)
    except (RuntimeError, TypeError):
        raise ValueError(f"unknown device {choice!r}: use cpu, cuda or cuda:N") from None
    if resolved.type not in ("cpu", "cuda"):
        raise ValueError(f"unsupported device {choice!r}: use cpu, cuda or cuda:N")
    if resolved.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError("CUDA was asked for but torch sees no GPU")
        if resolved.index is not None and resolved.index >= torch.cuda.device_count():
            raise ValueError(f"{choice!r}: there are only {torch.cuda.device_count()} GPUs")
    return resolved


class ChessformerEvaluator:
    """Evaluates boards with a Chessformer network."""

    has_policy = True
    has_wdl = True
    has_attention = True

    def __init__(self, model: torch.nn.Module, *, device: str | torch.device | None = None,
                 name: str = "chessformer", trained: bool = False):
        self.device = resolve_device(device)
        self.model = model.to(self.device).eval()
        self.name = name
        self.trained = trained
        self.layers = model.config.layers
        self.heads = model.config.heads

    def cache_key(self, board: chess.Board) -> Hashable:
        return pack(board).key()

    @torch.inference_mode()
    def forward_packed(self, packed, need_attention: bool = False) -> dict[str, np.ndarray]:
        """Raw network outputs (float32 numpy) for packed positions."""
        tokens = torch.from_numpy(tokens_from_packed(packed)).to(self.device, non_blocking=True)
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.device.type == "cuda"):
            out = self.model(tokens, need_attention=need_attention)
        return {k: v.float().cpu().numpy() for k, v in out.items()}

    def evaluate(self, boards: Sequence[chess.Board], *, attention: bool = False,
                 temperature: float = 1.0) -> list[Evaluation]:
        if not boards:
            return []
        packed = [pack(b) for b in boards]
        out = self.forward_packed(packed, need_attention=attention)
        wdl = _softmax(out["wdl"])
        evaluations = []
        for i, board in enumerate(boards):
            moves, indices = legal_move_indices(board)
            _check_finite(self.name, board, out, i, indices)
            w, d, l = (float(p) for p in wdl[i])
            extras = {
                "q": float(out["q"][i]), "q_error": float(out["q_err"][i]),
                "short_term": float(out["st"][i]), "short_term_error": float(out["st_err"][i]),
            }
            maps = None
            if attention:
                maps = out["attention"][i]  # (L, H, 64, 64) in the mover's frame
                if board.turn == chess.BLACK:
                    maps = maps[:, :, _UNMIRROR][:, :, :, _UNMIRROR]
            evaluations.append(Evaluation(
                score=wdl_to_score((w, d, l)), wdl=(w, d, l),
                policy=softmax_over_legal(out["policy"][i], moves, indices, temperature),
                extras=extras, attention=maps,
            ))
        return evaluations


# The outputs an Evaluation is made of; the policy counts at the legal moves only.
_CHECKED_OUTPUTS = ("wdl", "q", "q_err", "st", "st_err", "attention")


def _check_finite(name: str, board: chess.Board, out: dict[str, np.ndarray], i: int, indices: np.ndarray) -> None:
    """Raise ``NonFiniteOutput`` naming the outputs and the position when any is NaN or infinite."""
    bad = [key for key in _CHECKED_OUTPUTS if key in out and not np.isfinite(out[key][i]).all()]
    if len(indices) and not np.isfinite(out["policy"][i][indices]).all():
        bad.append("policy")
    if bad:
        raise NonFiniteOutput(f"{name} gave non-finite output ({', '.join(bad)}) for the position {board.fen()}")


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)
