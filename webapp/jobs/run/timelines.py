"""The decision timeline in the evaluation lane: phase 1's batches read with the readout points hooked.

The hooks sit on the network itself, so a batch is run on the network alone: inside the shared
batcher's ``exclusive`` (no other job's pass, and no lens call, runs while they are on; the
holder's own call goes straight through), with the same one forward pass the batch costs anyway,
through whatever wraps the evaluator. An evaluator that runs no torch network (the material
count), or a family whose lens cannot read the evaluation's pass, gets the plain evaluation and a
stored sentence saying why there is no timeline.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Sequence

import chess

from analysis.evaluator import Evaluation
from analysis.lens.timeline import TimelineRecorder


def _unwrap(evaluator) -> tuple[object | None, object | None]:
    """(the wrapper whose ``exclusive`` keeps the network to one caller or None, the torch evaluator
    holding ``model`` or None), looking through wrappers' ``inner``."""
    shared, current = None, evaluator
    for _ in range(8):
        if current is None:
            break
        if shared is None and hasattr(current, "exclusive"):
            shared = current
        if hasattr(current, "model") and hasattr(current, "encoding"):
            return shared, current
        current = getattr(current, "inner", None)
    return shared, None


class TimelineLane:
    """``evaluate(boards)``: the evaluations and, when ``enabled``, one stored timeline per board
    (``analysis.lens.timeline``; ``{"why": ...}`` where there is none); None per board when off."""

    def __init__(self, evaluator, enabled: bool = True):
        self.evaluator = evaluator
        self.shared, self.torch = _unwrap(evaluator) if enabled else (None, None)
        if not enabled:
            self.recorder = None
        elif self.torch is None:
            self.recorder = TimelineRecorder(None, f"{getattr(evaluator, 'name', 'this evaluator')} runs no "
                                                   "network with layers, so it has no readout points")
        else:
            self.recorder = TimelineRecorder.for_model(self.torch.model, self.torch.encoding)

    def evaluate(self, boards: Sequence[chess.Board]) -> tuple[list[Evaluation], list[dict | None]]:
        if self.recorder is None:
            return self.evaluator.evaluate(boards), [None] * len(boards)
        if self.recorder.why is not None:
            return self.evaluator.evaluate(boards), [{"why": self.recorder.why} for _ in boards]
        with self.shared.exclusive() if self.shared is not None else nullcontext(), \
                self.recorder.recording() as store:
            evaluations = self.evaluator.evaluate(boards)
        # The heads read the kept points with the hooks gone and the network shared again.
        return evaluations, self.recorder.timelines(boards, store)
