"""Corpus shards as the training loop's annotated table (``analysis.data.store.ANNOTATED_SCHEMA``).

The corpus stores what cannot be recomputed (the position with its history, Stockfish's labels);
the rest of an annotated row (lc0 planes, rule-50, legal moves' policy indices, the top moves'
indices) is derived here when a trainer reads it, so a position costs tens of bytes on disk,
not the 900 of its packed planes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import chess
import numpy as np
import pyarrow as pa

from analysis.data.corpus_files import read_corpus
from analysis.data.sources import PositionSource
from analysis.data.store import ANNOTATED_SCHEMA
from analysis.encoding import legal_move_indices, move_to_index, pack


def read_as_annotated(root: Path, *, columns: Iterable[str] | None = None, split: str | None = None) -> pa.Table:
    """The corpus as ``read_annotated`` gives a dataset: planes and indices packed here."""
    table = annotated(read_corpus(root, split=split))
    return table if columns is None else table.select(list(columns))


def annotated(table: pa.Table) -> pa.Table:
    """Corpus rows -> ``ANNOTATED_SCHEMA`` rows; ``action_*`` are the top-k moves, ``priority`` 0."""
    rows = []
    for row in table.to_pylist():
        board = PositionSource(row["fen"], row["history_fen"], row["history_moves"], row["game_id"], row["ply"],
                               row["source"]).board()
        packed = pack(board)
        _, legal = legal_move_indices(board)
        wdl = row["wdl"] or [round(1000 * row["win"]), 0, 1000 - round(1000 * row["win"])]
        rows.append({
            **{name: row[name] for name in ("fen", "history_fen", "history_moves", "game_id", "ply", "source",
                                            "split", "win", "cp", "mate", "best_move")},
            "priority": 0.0, "planes": packed.bits.astype("<u8").tobytes(), "rule50": packed.rule50,
            "wdl": [v / 1000 for v in wdl],
            "best_index": move_to_index(board, chess.Move.from_uci(row["best_move"])),
            "legal_indices": legal.astype(np.int16).tolist(),
            "action_indices": [move_to_index(board, chess.Move.from_uci(m)) for m in row["top_moves"]],
            "action_win": row["top_win"],
        })
    return pa.Table.from_pylist(rows, schema=ANNOTATED_SCHEMA)
