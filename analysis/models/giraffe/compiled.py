"""Giraffe's two networks run by numba on one position at a time, for the search on a CPU.

At one position per call torch's per-call overhead is most of the time for networks this
small (15,000 weights): the profile of the probability-limited search put about 90% of its
time in ``torch.nn.functional.linear``. Here the features (``encoding.giraffe.compiled``) and
both forwards are one compiled call on weights copied out of the torch modules once.
``tests/test_giraffe_compiled.py`` checks the outputs against the torch networks.
"""

from __future__ import annotations

from typing import Sequence

import chess
import numba
import numpy as np
import torch

from analysis.encoding.giraffe import legal_moves
from analysis.encoding.giraffe.compiled import board_arrays, features_into
from analysis.encoding.giraffe.features import BOARD_FEATURES, GLOBAL_SIZE, PIECE_SIZE, SQUARE_SIZE
from analysis.encoding.giraffe.moves import MOVE_FEATURES
from analysis.evaluator import Evaluation
from analysis.models.giraffe.decoding import evaluation
from analysis.models.giraffe.move_model import RANK_CAP, RANK_FEATURES

_P0, _S0 = GLOBAL_SIZE, GLOBAL_SIZE + PIECE_SIZE


def _layers(model: torch.nn.Module) -> list[torch.Tensor]:
    """Every weight and bias in the order the kernels read them from the packed buffer."""
    e, m = model.evaluator, model.move_evaluator
    return [e.first.global_in.weight, e.first.global_in.bias, e.first.piece_in.weight, e.first.piece_in.bias,
            e.first.square_in.weight, e.first.square_in.bias, e.hidden.weight, e.hidden.bias,
            e.out.weight, e.out.bias,
            m.global_in.weight, m.global_in.bias, m.move_in.weight, m.piece_in.weight, m.piece_in.bias,
            m.square_in.weight, m.square_in.bias, m.hidden.weight, m.hidden.bias, m.out.weight, m.out.bias]


def pack(model: torch.nn.Module) -> tuple[np.ndarray, np.ndarray]:
    """(weights as one float64 buffer, (8,) int64 widths: evaluator g, p, s, hidden, move evaluator g, p, s, hidden)."""
    c = model.config
    dims = np.array([c.global_units, c.piece_units, c.square_units, c.hidden, c.move_global_units,
                     c.move_piece_units, c.move_square_units, c.move_hidden], np.int64)
    with torch.no_grad():
        buffer = np.concatenate([t.detach().double().cpu().reshape(-1).numpy() for t in _layers(model)])
    return buffer, dims


@numba.njit(cache=True)
def _take(buf, at, rows, cols):
    return buf[at:at + rows * cols].reshape(rows, cols), at + rows * cols


@numba.njit(cache=True)
def _affine(w, b, x, start, out, out_at, relu):
    """out[out_at:] = w @ x[start:start + w.shape[1]] + b (ReLU'd when ``relu``); zero inputs skipped."""
    for u in range(w.shape[0]):
        out[out_at + u] = 0.0 if b.shape[0] == 0 else b[u]
    for i in range(w.shape[1]):
        xi = x[start + i]
        if xi != 0.0:
            for u in range(w.shape[0]):
                out[out_at + u] += w[u, i] * xi
    if relu:
        for u in range(w.shape[0]):
            if out[out_at + u] < 0.0:
                out[out_at + u] = 0.0


@numba.njit(cache=True)
def _value(x, buf, dims):
    """The evaluator network: tanh output for the side to move, and the buffer offset after it."""
    g, p, s, h = dims[0], dims[1], dims[2], dims[3]
    wg, at = _take(buf, 0, g, GLOBAL_SIZE)
    bg, at = _take(buf, at, 1, g)
    wp, at = _take(buf, at, p, PIECE_SIZE)
    bp, at = _take(buf, at, 1, p)
    ws, at = _take(buf, at, s, SQUARE_SIZE)
    bs, at = _take(buf, at, 1, s)
    wh, at = _take(buf, at, h, g + p + s)
    bh, at = _take(buf, at, 1, h)
    wo, at = _take(buf, at, 1, h)
    bo, at = _take(buf, at, 1, 1)
    first = np.empty(g + p + s)
    _affine(wg, bg[0], x, 0, first, 0, True)
    _affine(wp, bp[0], x, _P0, first, g, True)
    _affine(ws, bs[0], x, _S0, first, g + p, True)
    hidden = np.empty(h)
    _affine(wh, bh[0], first, 0, hidden, 0, True)
    out = np.empty(1)
    _affine(wo, bo[0], hidden, 0, out, 0, False)
    return np.tanh(out[0]), at


@numba.njit(cache=True, fastmath=True)
def _move_pass(moves, rank, gpart, const, wm, wh_g, wo, bo, out):
    """One pass of the move evaluator over every move: logits into ``out``."""
    g = gpart.shape[0]
    row = np.empty(MOVE_FEATURES + RANK_FEATURES)
    a = np.empty(g)
    for k in range(moves.shape[0]):
        row[:MOVE_FEATURES] = moves[k]
        row[MOVE_FEATURES] = rank[k, 0]
        row[MOVE_FEATURES + 1] = rank[k, 1]
        _affine(wm, np.empty(0), row, 0, a, 0, False)
        for u in range(g):
            a[u] = max(a[u] + gpart[u], 0.0)
        total = bo
        for u in range(const.shape[0]):
            hidden = const[u]
            for i in range(g):
                hidden += wh_g[u, i] * a[i]
            if hidden > 0.0:  # ReLU
                total += wo[u] * hidden
        out[k] = total


@numba.njit(cache=True)
def _move_logits(x, moves, buf, dims, at):
    """The move evaluator's second-pass logits (the paper's two-pass rank, as ``move_model``)."""
    g, p, s, h = dims[4], dims[5], dims[6], dims[7]
    wg, at = _take(buf, at, g, GLOBAL_SIZE)
    bg, at = _take(buf, at, 1, g)
    wm, at = _take(buf, at, g, MOVE_FEATURES + RANK_FEATURES)
    wp, at = _take(buf, at, p, PIECE_SIZE)
    bp, at = _take(buf, at, 1, p)
    ws, at = _take(buf, at, s, SQUARE_SIZE)
    bs, at = _take(buf, at, 1, s)
    wh, at = _take(buf, at, h, g + p + s)
    bh, at = _take(buf, at, 1, h)
    wo, at = _take(buf, at, 1, h)
    bo, at = _take(buf, at, 1, 1)
    gpart = np.empty(g)
    _affine(wg, bg[0], x, 0, gpart, 0, False)
    ps = np.empty(p + s)  # the piece and square groups are the same for every move: once per board
    _affine(wp, bp[0], x, _P0, ps, 0, True)
    _affine(ws, bs[0], x, _S0, ps, p, True)
    const = np.empty(h)
    for u in range(h):
        const[u] = bh[0, u]
        for i in range(p + s):
            const[u] += wh[u, g + i] * ps[i]
    wh_g = np.ascontiguousarray(wh[:, :g])
    n = moves.shape[0]
    rank = np.zeros((n, RANK_FEATURES))
    first = np.empty(n)
    _move_pass(moves, rank, gpart, const, wm, wh_g, wo[0], bo[0, 0], first)
    order = np.argsort(-first, kind="mergesort")  # stable, best first, as torch's stable argsort
    for place in range(n):
        k = order[place]
        rank[k, 0] = place / n
        rank[k, 1] = min(place, RANK_CAP) / RANK_CAP
    logits = np.empty(n)
    _move_pass(moves, rank, gpart, const, wm, wh_g, wo[0], bo[0, 0], logits)
    return logits


@numba.njit(cache=True)
def _move_rows(x_turn_white, bitboards, move_squares):
    """(M, 15) move features (``encoding.giraffe.moves``) of (from, to, promotion) triples."""
    n = move_squares.shape[0]
    rows = np.zeros((n, MOVE_FEATURES))
    flip = 0 if x_turn_white else 7
    for k in range(n):
        fr, to, promo = move_squares[k, 0], move_squares[k, 1], move_squares[k, 2]
        bit = np.uint64(1) << np.uint64(fr)
        piece = 0
        for j in range(6):
            if bitboards[j] & bit:
                piece = j
        rows[k, 0] = 1.0
        rows[k, 1 + piece] = 1.0
        rows[k, 7] = (fr % 8) / 7
        rows[k, 8] = ((fr // 8) ^ flip) / 7
        rows[k, 9] = (to % 8) / 7
        rows[k, 10] = ((to // 8) ^ flip) / 7
        if promo >= 2:  # knight 2 ... queen 5
            rows[k, 11 + promo - 2] = 1.0
    return rows


# These two stay plain Python, calling the compiled parts: numba's on-disk cache of a function is
# checked against its own source file only, so a compiled caller here would keep running an old
# ``features_into`` after ``analysis/encoding/giraffe/compiled.py`` changed (it did, once, and a
# training run searched with the previous features).
def value_of(bitboards, flags, buf, dims):
    x = np.empty(BOARD_FEATURES, np.float32)
    features_into(x, bitboards, flags)
    return _value(x, buf, dims)[0]


def value_and_logits(bitboards, flags, move_squares, buf, dims):
    x = np.empty(BOARD_FEATURES, np.float32)
    features_into(x, bitboards, flags)
    value, at = _value(x, buf, dims)
    rows = _move_rows(flags[0] == 1, bitboards, move_squares)
    return value, _move_logits(x, rows, buf, dims, at)


class CompiledGiraffe:
    """Both networks of one Giraffe model on weights copied out of it; a changed weight (an
    optimiser step) is noticed by the tensors' version counters and copied again."""

    def __init__(self, model: torch.nn.Module, name: str = "giraffe"):
        self.model = model
        self.name = name
        self._tensors = _layers(model)
        self._versions: list[int] = []
        self._fresh()

    def _fresh(self) -> None:
        versions = [t._version for t in self._tensors]
        if versions != self._versions:
            self.buffer, self.dims = pack(self.model)
            self._versions = versions

    def value(self, board: chess.Board) -> float:
        """The evaluator's tanh output in [-1, 1] for the side to move."""
        self._fresh()
        return float(value_of(*board_arrays(board), self.buffer, self.dims))

    def value_and_logits(self, board: chess.Board, moves: list[chess.Move]) -> tuple[float, np.ndarray]:
        """The value and each move's second-pass P(best) logit (``moves`` in the order given)."""
        self._fresh()
        squares = np.array([(m.from_square, m.to_square, m.promotion or 0) for m in moves], np.int64)
        value, logits = value_and_logits(*board_arrays(board), squares.reshape(-1, 3), self.buffer, self.dims)
        return float(value), logits

    def evaluate(self, boards: Sequence[chess.Board], *, temperature: float = 1.0) -> list[Evaluation]:
        """What the torch network and ``decoding.decode`` give for ``boards``, one at a time."""
        out = []
        for board in boards:
            moves, _ = legal_moves(board)
            value, logits = self.value_and_logits(board, moves)
            out.append(evaluation(board, moves, value, logits, temperature=temperature, name=self.name))
        return out
