"""The decision timeline: at which readout point a network settles on its move, for every ply.

Read from the evaluation's own forward pass: ``TimelineRecorder.recording`` hooks the network's
readout points (``LensAdapter.capture_hooks``) for the length of one evaluator call, and
``timelines`` reads each position's points out through the heads (the logit lens, with no
forward pass of its own). What is kept per position, and what a ply gets for the move played
there, is ``analysis.lens.decisions`` (no torch there: the web process reads it).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Sequence

import chess
import torch

from analysis.lens import LensUnavailable
from analysis.lens.core import ranks_of
from analysis.lens.decisions import position_timeline
from analysis.models.lens import LensAdapter, hooks


class TimelineRecorder:
    """Reads the decision timeline of each position a network evaluates, from the evaluation's
    own pass. ``why``: None when the network has the capability, else the sentence saying why not."""

    def __init__(self, adapter: LensAdapter | None, why: str | None = None):
        self.adapter = adapter
        self.why = why if adapter is None else adapter.why_not("timeline")

    @classmethod
    def for_model(cls, model: torch.nn.Module, encoding) -> "TimelineRecorder":
        from analysis.lens import lens_for

        try:
            return cls(lens_for(model, encoding))
        except LensUnavailable as exc:
            return cls(None, str(exc))

    @contextmanager
    def recording(self) -> Iterator[list]:
        """Hooks the readout points while the block runs the network once; yields the store."""
        store: list[torch.Tensor] = []
        if self.why is not None:
            yield store
            return
        with hooks(*self.adapter.capture_hooks(store)):
            yield store

    def timelines(self, boards: Sequence[chess.Board], store: list) -> list[dict]:
        """One stored timeline per board from a recorded pass over exactly ``boards`` (a board
        without legal moves, or a pass that ran no torch forward, gets ``{"why": ...}``)."""
        if self.why is not None:
            return [{"why": self.why} for _ in boards]
        readouts = list(self.adapter.readouts)
        if not store or len(store) % len(readouts):
            why = "the evaluation ran no forward pass through the network's layers, so no readout point was seen"
            return [{"why": why} for _ in boards]
        chunks = len(store) // len(readouts)  # a CPU forward may run a large batch in chunks
        points = [store[r] if chunks == 1 else torch.cat(store[r::len(readouts)]) for r in range(len(readouts))]
        prepared_all = [self.adapter.prepare(board) for board in boards]
        if sum(p.inputs.shape[0] for p in prepared_all) != len(points[0]):
            why = "the evaluation's pass did not run these positions alone, so its readout points are not theirs"
            return [{"why": why} for _ in boards]
        out, row = [], 0
        for prepared in prepared_all:
            rows = prepared.inputs.shape[0]
            if prepared.moves:
                out.append(self._read(prepared, [p[row:row + rows] for p in points]))
            else:
                out.append({"why": "the game is over here: no move to settle on"})
            row += rows
        return out

    def _read(self, prepared, points: list[torch.Tensor]) -> dict:
        """One position's points (rows each) through the heads: its stored timeline."""
        dtype = next(self.adapter.model.parameters()).dtype  # a bf16 pass's points are read in float32
        with torch.inference_mode():
            read = self.adapter.unembed(prepared, torch.cat(points).to(dtype), None)
        logits = read.logits.detach().float().cpu().numpy()  # (R, moves)
        return position_timeline(self.adapter.readouts, [m.uci() for m in prepared.moves], ranks_of(logits))
