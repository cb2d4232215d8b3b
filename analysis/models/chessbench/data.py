"""Annotated Parquet rows -> ChessBench training batches, encoded at load time.

The store keeps each position's FEN (and its history); this loader reads the FENs and
the targets and tokenises each batch through the registered FEN-token encoding
(``encode_fens``), so any annotated dataset (sf-v1, sf-v2 ...) serves this family.

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
import torch

from analysis.data.store import read_annotated
from analysis.encoding import get_encoding, index_to_move
from analysis.encoding.chessbench import NAME as ENCODING
from analysis.encoding.chessbench_actions import move_to_action
from analysis.models.chessbench.config import ACTION_VALUE, BEHAVIOURAL_CLONING, ChessBenchConfig

_COLUMNS = ["fen", "win", "best_move", "action_indices", "action_win"]


def _action_pairs(fens: list[str], lc0_indices: list, wins: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, ChessBench action, win) for every annotated move."""
    rows, actions, values = [], [], []
    for row, (fen, indices, move_wins) in enumerate(zip(fens, lc0_indices, wins)):
        if not indices:
            continue
        board = chess.Board(fen)
        for index, win in zip(indices, move_wins):
            rows.append(row)
            actions.append(move_to_action(index_to_move(board, int(index))))
            values.append(win)
    return np.asarray(rows, np.int64), np.asarray(actions, np.int64), np.asarray(values, np.float32)


class ChessBenchDataset(torch.utils.data.Dataset):
    """Indexed by an array of sample numbers; returns a whole batch as tensors."""

    def __init__(self, roots: Sequence[Path], split: str, config: ChessBenchConfig, *,
                 max_rows: int | None = None):
        table = pa.concat_tables(read_annotated(Path(r), columns=_COLUMNS, split=split) for r in roots)
        if max_rows is not None:
            table = table.slice(0, max_rows)
        self.head = config.head
        self.fens = table["fen"].to_pylist()
        if self.head == ACTION_VALUE:
            self.rows, self.actions, self.win = _action_pairs(
                self.fens, table["action_indices"].to_pylist(), table["action_win"].to_pylist())
        elif self.head == BEHAVIOURAL_CLONING:
            self.rows = np.arange(len(self.fens))
            self.actions = np.asarray([move_to_action(chess.Move.from_uci(m))
                                       for m in table["best_move"].to_pylist()], np.int64)
        else:
            self.rows = np.arange(len(self.fens))
            self.win = table["win"].to_numpy().astype(np.float32)
        if len(self.rows) == 0:
            what = "multipv-annotated " if self.head == ACTION_VALUE else ""
            raise ValueError(f"no {what}'{split}' rows in {', '.join(map(str, roots))}")

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, idx) -> dict[str, torch.Tensor]:
        idx = np.atleast_1d(np.asarray(idx, np.int64))
        encoding = get_encoding(ENCODING)  # looked up here: a dataset holds plain data (picklable for workers)
        tokens = encoding.encode_fens([self.fens[r] for r in self.rows[idx]])  # (B, 77), at load time
        if self.head == ACTION_VALUE:
            tokens = np.concatenate([tokens, self.actions[idx, None]], axis=1)  # (B, 78)
        batch = {"tokens": torch.from_numpy(tokens)}
        if self.head == BEHAVIOURAL_CLONING:
            batch["action"] = torch.from_numpy(self.actions[idx])
        else:
            batch["win"] = torch.from_numpy(self.win[idx])
        return batch


def make_dataset(roots: Sequence[Path], split: str, config: ChessBenchConfig, *,
                 max_rows: int | None = None, policy_temperature: float | None = None) -> ChessBenchDataset:
    """The family's training-data hook (``ModelFamily.dataset``). The lc0-plane settings of a run
    (policy temperature, WDL target, history dropout, colour flips) do not apply here."""
    return ChessBenchDataset(roots, split, config, max_rows=max_rows)
