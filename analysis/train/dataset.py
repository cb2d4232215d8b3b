"""Annotated Parquet shards -> training batches for the Chessformer.

The needed columns are read once into flat numpy arrays (ragged per-move
lists as CSR offsets), so a batch is a handful of vectorised gathers and
DataLoader workers share the arrays copy-on-write.

Targets (our choices where the paper trains on self-play data we lack):
- policy: softmax(action win probability / ``policy_temperature``) over the
  multipv-annotated moves, else one-hot on Stockfish's best move;
- wdl: Stockfish's UCI_ShowWDL draw share, with win and loss set so the
  expected score W + D/2 equals the win probability (``wdl_target="win"``;
  see ``consistent_wdl``), or Stockfish's WDL as it is (``"stockfish"``);
- q: 2 * win probability - 1;
- st (short-term value): the paper's "exponential moving average of future
  rewards with expected depth 6", over the same game's annotated positions
  (sign-flipped every ply); masked where under half the weight is present.

History dropout: with probability ``fen_only_share`` a training row is packed
from its FEN alone (lc0's ``fen_only`` history fill), as a pasted FEN is on
the site, so a position's value does not hinge on whether its moves are known.

Colour flip: the planes are already seen from the side to move, so a position
and its colour-mirrored twin (``chess.Board.mirror``) differ only in plane 108,
"black to move". Chess is symmetric under that mirror, so toggling the plane
for a share ``colour_flip_share`` of rows is an exact augmentation; it teaches
the network that the mover's colour alone is worth nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import chess
import numpy as np
import pyarrow as pa
import torch

from analysis.corpus.reader import read_as_annotated
from analysis.data.corpus_files import is_corpus
from analysis.data.store import PLANES_BYTES, read_annotated
from analysis.encoding import POLICY_SIZE, pack
from analysis.encoding.lc0_planes import BLACK_TO_MOVE_PLANE, bitboard_rows, unpack_planes

_COLUMNS = ["fen", "planes", "rule50", "win", "wdl", "best_index", "legal_indices", "action_indices", "action_win",
            "game_id", "ply", "source"]
WDL_TARGETS = ("win", "stockfish")
# Sources whose positions are not followed by their game's future (no short-term target).
_OFF_GAME_SOURCES = {"perturb", "refute"}
_BLACK_TO_MOVE_BYTES = slice(BLACK_TO_MOVE_PLANE * 8, (BLACK_TO_MOVE_PLANE + 1) * 8)  # its plane in a packed row
ST_DEPTH = 6
ST_HORIZON = 40


@dataclass
class _Ragged:
    offsets: np.ndarray  # (N + 1,) int64
    values: np.ndarray

    def rows(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row number within the batch, value) pairs for rows ``idx``."""
        starts, ends = self.offsets[idx], self.offsets[idx + 1]
        lengths = ends - starts
        batch_rows = np.repeat(np.arange(len(idx)), lengths)
        flat = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends)]) if len(idx) else np.zeros(0, np.int64)
        return batch_rows, self.values[flat]


def _ragged(column, dtype) -> _Ragged:
    lengths = np.asarray([0 if v is None else len(v) for v in column], np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    values = np.fromiter((x for v in column if v is not None for x in v), dtype=dtype, count=int(offsets[-1]))
    return _Ragged(offsets, values)


def short_term_targets(game_ids: list[str], plies: np.ndarray, sources: list[str], q: np.ndarray,
                       depth: float = ST_DEPTH) -> tuple[np.ndarray, np.ndarray]:
    """EMA of future q over each game's positions; returns (st, mask)."""
    lam = (depth - 1) / depth  # geometric weights (1-lam) lam^k: E[k + 1] = depth
    weights = (1 - lam) * lam ** np.arange(ST_HORIZON)
    st = np.zeros(len(q), np.float32)
    mask = np.zeros(len(q), bool)
    by_game: dict[str, dict[int, int]] = {}
    for i, (g, p, s) in enumerate(zip(game_ids, plies, sources)):
        if s not in _OFF_GAME_SOURCES:  # a perturbed child shares its parent's game but not its future
            by_game.setdefault(g, {})[int(p)] = i
    for rows in by_game.values():
        for ply, i in rows.items():
            total = covered = 0.0
            for k in range(ST_HORIZON):
                j = rows.get(ply + k)
                if j is not None:
                    total += weights[k] * (q[j] if k % 2 == 0 else -q[j])
                    covered += weights[k]
            if covered >= 0.5:
                st[i] = total / covered
                mask[i] = True
    return st, mask


def consistent_wdl(win: np.ndarray, wdl: np.ndarray) -> np.ndarray:
    """(N,) win probabilities and (N, 3) Stockfish WDLs -> WDLs whose W + D/2 is the win probability.

    Stockfish's WDL model is much steeper than the win-probability formula
    (at +100 cp it gives an expected score near 0.75, the formula 0.59); trained
    on both, cf-small's WDL head and q head told two different stories. The
    draw share is kept where it fits (D <= 2 min(win, 1 - win)).
    """
    draw = np.minimum(wdl[:, 1], 2 * np.minimum(win, 1 - win))
    out = np.stack([win - draw / 2, draw, 1 - win - draw / 2], axis=1)
    return np.clip(out, 0.0, 1.0).astype(np.float32)


class PositionDataset(torch.utils.data.Dataset):
    """Indexed by an array of row numbers; returns a whole batch as tensors."""

    def __init__(self, root: Path | Sequence[Path], split: str, *, policy_temperature: float = 0.02,
                 max_rows: int | None = None,
                 wdl_target: str = "stockfish", fen_only_share: float = 0.0, colour_flip_share: float = 0.0,
                 seed: int = 0):
        if wdl_target not in WDL_TARGETS:
            raise ValueError(f"wdl_target must be one of {', '.join(WDL_TARGETS)}, not {wdl_target!r}")
        if not (0 <= fen_only_share <= 1 and 0 <= colour_flip_share <= 1):
            raise ValueError("fen_only_share and colour_flip_share must be in [0, 1]")
        self.fen_only_share, self.colour_flip_share, self.seed = fen_only_share, colour_flip_share, seed
        roots = [root] if isinstance(root, Path) else list(root)
        # Each root an annotated dataset or a position corpus (analysis.corpus); the two may name a list's
        # items differently (Parquet's "element", pyarrow's "item"), so each is cast to the first one's schema.
        tables = [(read_as_annotated if is_corpus(r) else read_annotated)(r, columns=_COLUMNS, split=split).select(_COLUMNS)
                  for r in roots]
        table = pa.concat_tables([t.cast(tables[0].schema) for t in tables])
        if max_rows is not None:
            table = table.slice(0, max_rows)
        if table.num_rows == 0:
            raise ValueError(f"no '{split}' rows in {', '.join(map(str, roots))}")
        self.size = table.num_rows
        planes = table["planes"].combine_chunks()
        self.planes = np.frombuffer(planes.buffers()[1], np.uint8)[: self.size * PLANES_BYTES].reshape(self.size, -1).copy()
        self.rule50 = table["rule50"].to_numpy().astype(np.float32)
        win = table["win"].to_numpy().astype(np.float32)
        self.q = 2 * win - 1
        self.wdl = np.asarray(table["wdl"].to_pylist(), np.float32)
        if wdl_target == "win":
            self.wdl = consistent_wdl(win, self.wdl)
        self.fens = table["fen"].to_pylist()
        best = table["best_index"].to_numpy().astype(np.int64)
        self.legal = _ragged(table["legal_indices"].to_pylist(), np.int64)
        actions = table["action_indices"].to_pylist()
        action_win = table["action_win"].to_pylist()
        # Policy targets, precomputed as CSR (index, probability).
        idx_lists, prob_lists = [], []
        for b, a, w in zip(best, actions, action_win):
            if a:
                w = np.asarray(w, np.float64) / policy_temperature
                p = np.exp(w - w.max())
                idx_lists.append(a)
                prob_lists.append((p / p.sum()).tolist())
            else:
                idx_lists.append([int(b)])
                prob_lists.append([1.0])
        self.policy_idx = _ragged(idx_lists, np.int64)
        self.policy_prob = _ragged(prob_lists, np.float32)
        self.st, self.st_mask = short_term_targets(table["game_id"].to_pylist(), table["ply"].to_numpy(),
                                                   table["source"].to_pylist(), self.q)
        self.has_actions = np.asarray([bool(a) for a in actions])

    def __len__(self) -> int:
        return self.size

    def _planes(self, idx: np.ndarray) -> np.ndarray:
        """Packed planes of rows ``idx``, with history dropout and colour flips (module doc)."""
        planes = self.planes[idx]
        rng = np.random.default_rng([self.seed, *idx[:8].tolist()])
        fen_only, flip = rng.random(len(idx)), rng.random(len(idx))
        for row in np.flatnonzero(fen_only < self.fen_only_share):
            planes[row] = bitboard_rows(pack(chess.Board(self.fens[idx[row]])).bits[None])[0]
        planes[flip < self.colour_flip_share, _BLACK_TO_MOVE_BYTES] ^= 0xFF
        return planes

    def __getitem__(self, idx) -> dict[str, torch.Tensor]:
        idx = np.atleast_1d(np.asarray(idx, np.int64))
        b = len(idx)
        tokens = np.ascontiguousarray(unpack_planes(self._planes(idx), self.rule50[idx]).transpose(0, 2, 1))
        policy = np.zeros((b, POLICY_SIZE), np.float32)
        rows, cols = self.policy_idx.rows(idx)
        _, probs = self.policy_prob.rows(idx)
        policy[rows, cols] = probs
        legal = np.zeros((b, POLICY_SIZE), bool)
        rows, cols = self.legal.rows(idx)
        legal[rows, cols] = True
        return {
            "tokens": torch.from_numpy(tokens),
            "policy": torch.from_numpy(policy),
            "legal": torch.from_numpy(legal),
            "wdl": torch.from_numpy(self.wdl[idx]),
            "q": torch.from_numpy(self.q[idx]),
            "st": torch.from_numpy(self.st[idx]),
            "st_mask": torch.from_numpy(self.st_mask[idx]),
        }


class EpochBatches(torch.utils.data.Sampler):
    """Shuffled index batches forever (epoch after epoch), this rank's share only (DDP)."""

    def __init__(self, size: int, batch_size: int, *, seed: int, rank: int = 0, world: int = 1, start_batch: int = 0):
        self.size, self.batch_size, self.seed = size, batch_size, seed
        self.rank, self.world, self.start_batch = rank, world, start_batch

    def __iter__(self):
        per_epoch = max(1, self.size // (self.batch_size * self.world))
        batch = self.start_batch
        while True:
            epoch, within = divmod(batch, per_epoch)
            order = np.random.default_rng(self.seed + epoch).permutation(self.size)
            lo = (within * self.world + self.rank) * self.batch_size
            chunk = order[lo: lo + self.batch_size]
            if len(chunk) < self.batch_size:  # tiny datasets: wrap around
                chunk = np.resize(order, self.batch_size) if self.size < self.batch_size else order[: self.batch_size]
            yield chunk
            batch += 1
