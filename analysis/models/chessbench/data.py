"""Annotated Parquet rows -> ChessBench training batches, encoded at load time.

The store keeps each position's FEN (and its history); this loader reads the FENs and
the targets and tokenises every row once, when the dataset is built, through the
registered FEN-token encoding (``encode_fens``), so any annotated dataset (sf-v1,
sf-v2 ...) serves this family and a batch is only an index into arrays (a GPU's
steps are not held up by Python string work).

- action value: one sample per (position, move) pair of the multipv-annotated rows,
  the store's ``action_indices`` (lc0 policy indices, turned into real moves and then
  ChessBench actions) with their ``action_win``; rows without multipv have no pairs;
- state value: one sample per row, target ``win``;
- behavioural cloning: one sample per row, target Stockfish's ``best_move``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import chess
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from analysis.data.store import read_annotated
from analysis.encoding import get_encoding
from analysis.encoding.chessbench import NAME as ENCODING
from analysis.encoding.chessbench_actions import move_to_action
from analysis.models.chessbench.lc0_actions import lc0_indices_to_actions
from analysis.models.chessbench.config import ACTION_VALUE, BEHAVIOURAL_CLONING, ChessBenchConfig

_COLUMNS = ["fen", "win", "best_move", "action_indices", "action_win"]


def _action_pairs(tokens: np.ndarray, lc0_indices: pa.ChunkedArray, wins: pa.ChunkedArray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, ChessBench action, win) for every annotated move."""
    indices = lc0_indices.combine_chunks()
    rows = pc.list_parent_indices(indices).to_numpy().astype(np.int64)
    flat = pc.list_flatten(indices).to_numpy().astype(np.int64)
    values = pc.list_flatten(wins.combine_chunks()).to_numpy().astype(np.float32)
    return rows, lc0_indices_to_actions(tokens, rows, flat), values


class ChessBenchDataset(torch.utils.data.Dataset):
    """Indexed by an array of sample numbers; returns a whole batch as tensors."""

    def __init__(self, roots: Sequence[Path], split: str, config: ChessBenchConfig, *,
                 max_rows: int | None = None):
        table = pa.concat_tables(read_annotated(Path(r), columns=_COLUMNS, split=split) for r in roots)
        if max_rows is not None:
            table = table.slice(0, max_rows)
        self.head = config.head
        self.fens = fens = table["fen"].to_pylist()
        self.tokens = get_encoding(ENCODING).encode_fens(fens).astype(np.uint8)  # (rows, 77): 31 symbols
        if self.head == ACTION_VALUE:
            self.rows, self.actions, self.win = _action_pairs(self.tokens, table["action_indices"], table["action_win"])
        elif self.head == BEHAVIOURAL_CLONING:
            self.rows = np.arange(len(fens))
            self.actions = np.asarray([move_to_action(chess.Move.from_uci(m))
                                       for m in table["best_move"].to_pylist()], np.int64)
        else:
            self.rows = np.arange(len(fens))
            self.win = table["win"].to_numpy().astype(np.float32)
        if len(self.rows) == 0:
            what = "multipv-annotated " if self.head == ACTION_VALUE else ""
            raise ValueError(f"no {what}'{split}' rows in {', '.join(map(str, roots))}")

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, idx) -> dict[str, torch.Tensor]:
        idx = np.atleast_1d(np.asarray(idx, np.int64))
        tokens = self.tokens[self.rows[idx]].astype(np.int64)  # (B, 77)
        if self.head == ACTION_VALUE:
            tokens = np.concatenate([tokens, self.actions[idx, None]], axis=1)  # (B, 78)
        batch = {"tokens": torch.from_numpy(tokens)}
        if self.head == BEHAVIOURAL_CLONING:
            batch["action"] = torch.from_numpy(self.actions[idx])
        else:
            batch["win"] = torch.from_numpy(self.win[idx])
        return batch


def make_dataset(roots: Sequence[Path], split: str, config: ChessBenchConfig, *,
                 max_rows: int | None = None, policy_temperature: float | None = None,
                 fen_only_share: float = 0.0, colour_flip_share: float = 0.0, seed: int = 0) -> ChessBenchDataset:
    """The family's training-data hook (``ModelFamily.dataset``). The lc0-plane settings of a run
    (policy temperature, WDL target, history dropout, colour flips) do not apply here."""
    return ChessBenchDataset(roots, split, config, max_rows=max_rows)
