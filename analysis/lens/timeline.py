"""The decision timeline: at which readout point a network settles on its move, for every ply.

Read from the evaluation's own forward pass: ``TimelineRecorder.recording`` hooks the network's
readout points (``LensAdapter.capture_hooks``) for the length of one evaluator call, and
``timelines`` reads the points out through the policy head (the logit lens, with no forward
pass of its own). Where the adapter reads one point of many positions at once (``move_logits``),
it goes backwards from the network's own output and, per position, only as far as the timeline
needs: once the final move is not top at a point, the earlier points cannot change where it
settles. Other families read each position's points in one ``unembed`` call. What is kept per
position, and what a ply gets for the move played there, is ``analysis.lens.decisions`` (no
torch there: the web process reads it).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Sequence

import chess
import numpy as np
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
        prepared, rows = zip(*(self.adapter.timeline_prepare(board) for board in boards))
        if sum(rows) != len(points[0]):
            why = "the evaluation's pass did not run these positions alone, so its readout points are not theirs"
            return [{"why": why} for _ in boards]
        batched = type(self.adapter).move_logits is not LensAdapter.move_logits
        ranks = (self._read_back if batched else self._read_all)(prepared, rows, points)
        # One readouts list for every position (fewer objects kept while the job runs).
        return [position_timeline(readouts, [m.uci() for m in p.moves], ranks[i]) if p.moves
                else {"why": "the game is over here: no move to settle on"} for i, p in enumerate(prepared)]

    def _read_back(self, prepared, rows, points: list[torch.Tensor]) -> dict[int, list]:
        """Every legal move's ranks at the points read, per position with moves: from the last point
        (the network's own output) backwards, each position only while its final move is still top
        (None at the points it did not need), all positions still going read in one call a point."""
        starts = np.cumsum([0, *rows])
        spans = [np.arange(a, b) for a, b in zip(starts[:-1], starts[1:])]
        going = [i for i, p in enumerate(prepared) if p.moves]
        ranks = {i: [None] * len(points) for i in going}
        final = {}
        dtype = next(self.adapter.model.parameters()).dtype  # a bf16 pass's points are read in float32
        with torch.inference_mode():
            for r in range(len(points) - 1, -1, -1):
                if not going:
                    break
                at = torch.from_numpy(np.concatenate([spans[i] for i in going])).to(points[r].device)
                logits = self.adapter.move_logits([prepared[i] for i in going], points[r].index_select(0, at).to(dtype),
                                                  [rows[i] for i in going])
                table = ranks_table(logits, [len(prepared[i].moves) for i in going])
                still = []
                for i, row, moves in zip(going, table, (len(prepared[i].moves) for i in going)):
                    ranks[i][r] = row[:moves]
                    if r == len(points) - 1:  # the network's own output: its final move
                        final[i] = int((row == 1).argmax())
                    if row[final[i]] == 1:
                        still.append(i)
                going = still
        return ranks


    def _read_all(self, prepared, rows, points: list[torch.Tensor]) -> dict[int, list]:
        """Every point of each position in one call of the heads (a family that reads one position
        at a time: a call a point would cost more than the points it saves)."""
        starts = np.cumsum([0, *rows])
        dtype = next(self.adapter.model.parameters()).dtype  # a bf16 pass's points are read in float32
        ranks = {}
        with torch.inference_mode():
            for i, p in enumerate(prepared):
                if p.moves:
                    stacked = torch.cat([point[starts[i]:starts[i + 1]] for point in points]).to(dtype)
                    logits = self.adapter.unembed(p, stacked, None).logits.detach().float().cpu().numpy()
                    ranks[i] = list(ranks_of(logits))
        return ranks


def ranks_table(logits: Sequence[torch.Tensor], counts: Sequence[int]) -> np.ndarray:
    """``ranks_of`` for several positions in one go: (positions, most moves), the ``counts[i]``
    legal moves of position i first (1 + how many of its moves have a strictly larger logit)."""
    counts = torch.as_tensor(counts)
    padded = torch.full((len(counts), int(counts.max())), -torch.inf)
    padded[torch.arange(padded.shape[1]) < counts[:, None]] = torch.cat(list(logits)).detach().float().cpu()
    return (1 + (padded[:, None, :] > padded[:, :, None]).sum(-1)).numpy()
