"""Every readout point of a network over many positions: per real square where the family has
squares (``LensAdapter.square_stream``, (64, C) a position, a1 = 0), one vector a position where it
has none (Giraffe's hidden layers, ``point_vector``).

Read from the network's own batched forward (``capture_hooks``: one pass per batch gives every
point), or, for a family whose points need a pass of their own (Giraffe), one ``run`` per
position. An action-value net (one row a legal move) is read on its first row. Stored as float16
to keep ten thousand positions of seven points in memory; probes cast back to float32.

Controls: ``untrained_copy`` (the same architecture and config, initialised with the seed) and
``input_planes`` (the position itself, 12 one-hot planes per real square: own and opponent pawn,
knight, bishop, rook, queen, king; the same for every family, so selectivities compare).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import chess
import numpy as np
import torch

from analysis.models.lens import LensAdapter, Prepared, hooks

Progress = Callable[[int, int], None]


@dataclass
class Activations:
    """``values[k]``: readout point ``points[k]`` over the positions, (N, 64, C) when ``per_square``
    else (N, C), float16."""

    points: list[str]
    per_square: bool
    values: list[np.ndarray]

    def point(self, k: int) -> np.ndarray:
        return self.values[k].astype(np.float32)


def untrained_copy(model: torch.nn.Module, seed: int) -> torch.nn.Module:
    """The same family and config, freshly initialised with ``seed`` (the untrained control)."""
    from analysis.models import get_family

    state = torch.random.get_rng_state()
    try:
        torch.manual_seed(seed)
        copy = get_family(model.family).build(model.config)
    finally:
        torch.random.set_rng_state(state)
    return copy.to(next(model.parameters()).device).eval()


def has_squares(adapter: LensAdapter, board: chess.Board) -> bool:
    try:
        adapter.square_rows(adapter.prepare(board), adapter.readouts[0])
        return True
    except ValueError:
        return False


def collect(adapter: LensAdapter, boards: Sequence[chess.Board], batch: int = 256,
            progress: Progress | None = None) -> Activations:
    """Every readout point of ``adapter``'s network on ``boards`` (each with a legal move)."""
    per_square = has_squares(adapter, boards[0])
    values: list[list[np.ndarray]] = [[] for _ in adapter.readouts]
    for start in range(0, len(boards), batch):
        chunk = boards[start:start + batch]
        points = _batched(adapter, chunk) if not adapter.why_not("timeline") else _one_by_one(adapter, chunk)
        for k, rows in enumerate(points):
            values[k].append(_view(adapter, chunk, k, rows, per_square))
        if progress is not None:
            progress(min(start + batch, len(boards)), len(boards))
    return Activations(list(adapter.readouts), per_square, [np.concatenate(v) for v in values])


@torch.inference_mode()
def _batched(adapter: LensAdapter, boards: Sequence[chess.Board]) -> list[tuple[list[Prepared], torch.Tensor]]:
    """One forward of the network over ``boards`` with every point captured: per point, each
    position's prepared form and the point's rows, stacked."""
    from analysis.models import get_family

    model = adapter.model
    prepared = [adapter.prepare(b) for b in boards]
    inputs = torch.from_numpy(get_family(model.family).network_inputs(boards, adapter.encoding, model.config))
    store: list[torch.Tensor] = []
    with hooks(*adapter.capture_hooks(store)):
        model(inputs.to(adapter.device))
    n = len(adapter.readouts)
    if len(store) % n:
        raise RuntimeError(f"the {adapter.family} hooks gave {len(store)} tensors for {n} points")
    chunks = [store[i:i + n] for i in range(0, len(store), n)]
    return [(prepared, torch.cat([c[k] for c in chunks])) for k in range(n)]


@torch.inference_mode()
def _one_by_one(adapter: LensAdapter, boards: Sequence[chess.Board]):
    prepared = [adapter.prepare(b) for b in boards]
    seen = [adapter.run(p, capture=True)[0] for p in prepared]
    return [(prepared, [s[k] for s in seen]) for k in range(len(adapter.readouts))]


def _view(adapter: LensAdapter, boards, k: int, rows, per_square: bool) -> np.ndarray:
    """Point ``k`` per position: (B, 64, C) by real square, or (B, C)."""
    prepared, tensor = rows
    point = adapter.readouts[k]
    out, at = [], 0
    for p in prepared:
        if isinstance(tensor, list):
            part = tensor.pop(0)[:1]
        else:
            part, at = tensor[at:at + 1], at + p.inputs.shape[0]
        first = Prepared(p.board, p.moves, p.inputs[:1], p.extra)
        view = adapter.square_stream(first, point, part) if per_square else adapter.point_vector(first, point, part)
        out.append(view[0].float().cpu().numpy().astype(np.float16))
    return np.stack(out)


PLANES = [(own, kind) for own in (True, False) for kind in chess.PIECE_TYPES]


def input_planes(boards: Sequence[chess.Board]) -> np.ndarray:
    """(N, 64, 12) float32: the input control, per real square, one-hot own / opponent piece type."""
    out = np.zeros((len(boards), 64, len(PLANES)), dtype=np.float32)
    for i, board in enumerate(boards):
        for square, piece in board.piece_map().items():
            out[i, square, PLANES.index((piece.color == board.turn, piece.piece_type))] = 1.0
    return out
