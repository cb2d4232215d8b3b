"""Batched network inference behind the Evaluator API, one evaluator for every family.

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

from analysis.encoding import get_encoding
from analysis.evaluator import Evaluation, NoActionValues
from analysis.models import get_family


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


class TorchEvaluator:
    """Evaluates boards with a network of any registered family.

    The family decides what the outputs mean (``decode``) and what the network
    offers (``capabilities``); the encoding makes its input and its cache keys.
    """

    def __init__(self, model: torch.nn.Module, *, device: str | torch.device | None = None,
                 name: str | None = None, trained: bool = False, encoding: str | None = None):
        self.family = get_family(model.family)
        self.encoding = get_encoding(encoding or self.family.encodings[0])
        self.family.check_encoding(self.encoding.name)
        self.device = resolve_device(device)
        self.model = model.to(self.device).eval()
        self.name = name or self.family.name
        self.trained = trained
        self.capabilities = self.family.capabilities(model.config)
        self.meta = None  # the CheckpointMeta, when loaded from a file
        # On a CPU, a family's compiled kernel answers instead of torch (same outputs, see
        # ``ModelFamily.cpu_kernel``); ``value_only`` then tells a search it can ask for values alone.
        self._kernel = None
        if self.device.type == "cpu" and self.family.cpu_kernel is not None:
            self._kernel = self.family.cpu_kernel(self.model, self.name)
        self.value_only = self._kernel.value if self._kernel is not None else None
        # The last plain forward pass of a network with action values: ``evaluate_actions`` right after
        # ``evaluate`` on the same positions (the site's phase 1 asks both) reuses it.
        self._last: tuple[list, dict[str, np.ndarray]] | None = None

    def cache_key(self, board: chess.Board) -> Hashable:
        return self.encoding.position_key(board)

    @torch.inference_mode()
    def forward(self, boards: Sequence[chess.Board], need_attention: bool = False) -> dict[str, np.ndarray]:
        """Raw network outputs (float32 numpy) for ``boards``; bf16 autocast on CUDA."""
        inputs = torch.from_numpy(self.family.network_inputs(boards, self.encoding, self.model.config))
        inputs = inputs.to(self.device, non_blocking=True)
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.device.type == "cuda"):
            out = self.model(inputs, need_attention=need_attention)
        return {k: v.float().cpu().numpy() for k, v in out.items()}

    def evaluate(self, boards: Sequence[chess.Board], *, attention: bool = False,
                 temperature: float = 1.0) -> list[Evaluation]:
        if not boards:
            return []
        if attention and self.capabilities.attention is None:
            raise ValueError(f"{self.name} has no attention maps")
        if self._kernel is not None and not attention:
            return self._kernel.evaluate(boards, temperature=temperature)
        out = self.forward(boards, need_attention=attention)
        if self.capabilities.action_values and not attention:
            self._last = ([self.cache_key(b) for b in boards], out)
        return self.family.decode(out, boards, self.encoding, temperature=temperature, attention=attention,
                                  name=self.name)

    def evaluate_actions(self, boards: Sequence[chess.Board]) -> list[dict[chess.Move, float]]:
        if not self.capabilities.action_values or self.family.decode_actions is None:
            raise NoActionValues(f"{self.name} ({self.family.name}) has no action-value head")
        if not boards:
            return []
        last, self._last = self._last, None
        out = last[1] if last is not None and last[0] == [self.cache_key(b) for b in boards] else self.forward(boards)
        return self.family.decode_actions(out, boards, self.encoding, name=self.name)


def make_evaluator(model: torch.nn.Module, **kwargs) -> TorchEvaluator:
    """The evaluator for a freshly built or loaded network (keyword arguments as ``TorchEvaluator``)."""
    return TorchEvaluator(model, **kwargs)
