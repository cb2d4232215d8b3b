"""Annotated Parquet rows -> ChessBench training batches, encoded at load time.

The store keeps each position's FEN (and its history); this loader reads the FENs and
the targets and tokenises every row once, when the dataset is built, through the
registered FEN-token encoding (``encode_fens``), so any annotated dataset (sf-v1,
sf-v2 ...) serves this family and a batch is only an index into arrays (a GPU's
steps are not held up by Python string work).

- action value: one sample per (position, move) pair of the multipv-annotated rows,
  the store's ``action_indices`` (lc0 policy indices, turned into real moves and then
  ChessBench actions) with their ``action_win``; rows without multipv have no pairs;
- state value: one sample per row, target ``win``; from a position corpus with ``corpus_children``
  = k, also one per each row's top k moves: the position after the move, valued 1 - the move's win
  probability (the side to move changes). Game positions seldom show what a tactic leaves behind; the
  one-ply agent scores exactly those positions, one per legal move;
- behavioural cloning: one sample per row, target Stockfish's ``best_move``.

Colour flip (training rows only): with probability ``colour_flip_share`` a sample is given as
its ``chess.Board.mirror()`` (colours swapped, board flipped, the move mirrored). ChessBench's
tokens are never flipped to the mover's view, so unlike the lc0 planes the two forms differ
everywhere; chess is symmetric under the mirror, so the targets stand, and the augmentation
teaches the colour symmetry the value sanity suite checks (mirrored openings) without a second
pass over the data. Both forms are tokenised once, when the dataset is built; the draw is
afresh for every batch, seeded by the run's seed and the batch's samples (as the lc0 loader).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import chess
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from analysis.data.corpus_files import is_corpus, read_corpus
from analysis.data.store import ANNOTATED_SCHEMA, read_annotated
from analysis.encoding import get_encoding
from analysis.encoding.chessbench import NAME as ENCODING
from analysis.encoding.chessbench_actions import NUM_ACTIONS, action_to_move, move_to_action
from analysis.models.chessbench.lc0_actions import lc0_indices_to_actions
from analysis.models.chessbench.config import ACTION_VALUE, BEHAVIOURAL_CLONING, STATE_VALUE, ChessBenchConfig

_COLUMNS = ["fen", "win", "best_move", "action_indices", "action_win"]
_TOP = ["top_moves", "top_win"]  # a position corpus's top k lines (analysis.corpus.shard.SCHEMA)
_SCHEMA = pa.schema([*(ANNOTATED_SCHEMA.field(c) for c in _COLUMNS),
                     ("top_moves", pa.list_(pa.string())), ("top_win", pa.list_(pa.float32()))])


def _action_pairs(tokens: np.ndarray, lc0_indices: pa.ChunkedArray, wins: pa.ChunkedArray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, ChessBench action, win) for every annotated move."""
    indices = lc0_indices.combine_chunks()
    rows = pc.list_parent_indices(indices).to_numpy().astype(np.int64)
    flat = pc.list_flatten(indices).to_numpy().astype(np.int64)
    values = pc.list_flatten(wins.combine_chunks()).to_numpy().astype(np.float32)
    return rows, lc0_indices_to_actions(tokens, rows, flat), values


def _read(root: Path, split: str, head: str) -> pa.Table:
    """The rows this family reads, from an annotated dataset or a position corpus (``analysis.corpus``).
    A corpus holds only its top k moves' values, all of them good moves: no action-value target.
    ``top_moves`` and ``top_win`` are a corpus's (null for a dataset's rows): ``corpus_children``."""
    if not is_corpus(root):
        table = read_annotated(root, columns=_COLUMNS, split=split)
    elif head == ACTION_VALUE:
        raise ValueError(f"{root} is a position corpus: it values only Stockfish's top moves, not every legal "
                         "move, so it trains a state-value or behavioural-cloning head, not action value")
    else:
        table = read_corpus(root, columns=["fen", "win", "best_move", *_TOP], split=split)
    return pa.table([table[c] if c in table.column_names else pa.nulls(table.num_rows, _SCHEMA.field(c).type)
                     for c in _SCHEMA.names], schema=_SCHEMA)


def _with_children(table: pa.Table, k: int) -> pa.Table:
    """``table`` and, after it, the position after each row's top ``k`` moves, valued 1 - that move's
    win probability (the other side is to move)."""
    fens, wins = [], []
    for fen, moves, move_wins in zip(table["fen"].to_pylist(), table["top_moves"].to_pylist(),
                                     table["top_win"].to_pylist()):
        board = chess.Board(fen)
        for move, win in zip((moves or [])[:k], (move_wins or [])[:k]):
            board.push(chess.Move.from_uci(move))
            fens.append(board.fen())
            wins.append(1.0 - win)
            board.pop()
    columns = {"fen": pa.array(fens, pa.string()), "win": pa.array(wins, _SCHEMA.field("win").type)}
    children = pa.table([columns.get(c, pa.nulls(len(fens), _SCHEMA.field(c).type)) for c in _SCHEMA.names],
                        schema=_SCHEMA)
    return pa.concat_tables([table, children])


def _mirror(move: chess.Move) -> chess.Move:
    return chess.Move(chess.square_mirror(move.from_square), chess.square_mirror(move.to_square), move.promotion)


# Action -> the action of the same move on the colour-mirrored board (the action set is closed
# under the mirror: it is every queen, knight and promotion move of either colour).
_MIRRORED_ACTIONS = np.asarray([move_to_action(_mirror(action_to_move(a))) for a in range(NUM_ACTIONS)], np.int64)


class ChessBenchDataset(torch.utils.data.Dataset):
    """Indexed by an array of sample numbers; returns a whole batch as tensors."""

    def __init__(self, roots: Sequence[Path], split: str, config: ChessBenchConfig, *,
                 max_rows: int | None = None, colour_flip_share: float = 0.0, seed: int = 0,
                 corpus_children: int = 0):
        if not 0 <= colour_flip_share <= 1:
            raise ValueError("colour_flip_share must be in [0, 1]")
        if corpus_children and config.head != STATE_VALUE:
            raise ValueError("corpus_children adds positions valued by their win probability: state value only")
        table = pa.concat_tables(_read(Path(r), split, config.head) for r in roots)
        if max_rows is not None:
            table = table.slice(0, max_rows)
        if corpus_children:
            table = _with_children(table, corpus_children)
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
        self.colour_flip_share, self.seed = colour_flip_share, seed
        if colour_flip_share > 0:
            mirrored = [chess.Board(f).mirror().fen() for f in fens]
            self.mirrored_tokens = get_encoding(ENCODING).encode_fens(mirrored).astype(np.uint8)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, idx) -> dict[str, torch.Tensor]:
        idx = np.atleast_1d(np.asarray(idx, np.int64))
        tokens = self.tokens[self.rows[idx]].astype(np.int64)  # (B, 77)
        actions = self.actions[idx] if self.head != STATE_VALUE else None
        if self.colour_flip_share > 0:
            flip = np.random.default_rng([self.seed, *idx[:8].tolist()]).random(len(idx)) < self.colour_flip_share
            tokens[flip] = self.mirrored_tokens[self.rows[idx[flip]]]
            if actions is not None:
                actions = np.where(flip, _MIRRORED_ACTIONS[actions], actions)
        if self.head == ACTION_VALUE:
            tokens = np.concatenate([tokens, actions[:, None]], axis=1)  # (B, 78)
        batch = {"tokens": torch.from_numpy(tokens)}
        if self.head == BEHAVIOURAL_CLONING:
            batch["action"] = torch.from_numpy(actions)
        else:
            batch["win"] = torch.from_numpy(self.win[idx])
        return batch


def make_dataset(roots: Sequence[Path], split: str, config: ChessBenchConfig, *,
                 max_rows: int | None = None, policy_temperature: float | None = None,
                 fen_only_share: float = 0.0, colour_flip_share: float = 0.0, seed: int = 0,
                 corpus_children: int = 0) -> ChessBenchDataset:
    """The family's training-data hook (``ModelFamily.dataset``). The lc0-plane settings of a run
    (policy temperature, WDL target, history dropout) do not apply here: a FEN has no history."""
    return ChessBenchDataset(roots, split, config, max_rows=max_rows, colour_flip_share=colour_flip_share, seed=seed,
                             corpus_children=corpus_children)
