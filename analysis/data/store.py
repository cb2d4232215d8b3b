"""On-disk dataset format: Parquet shards plus a JSON dataset card.

Why Parquet: it is columnar (a trainer reads only the columns it needs, e.g.
the packed planes and targets, not the FENs), compressed, typed (nested lists
hold the per-move action values without a custom codec), self-describing,
and read in row groups so a loader can stream shards larger than memory.
pyarrow is already a dependency; any Arrow tool can inspect the files.

Layout of a dataset directory::

    plan.parquet               positions to annotate, deduplicated, tactics first
    annotated/shard-00000.parquet ...  fixed-size slices of the plan, annotated
    card.json                  the dataset card (sources, counts, Stockfish, timing)

A shard is written to a temporary name and renamed when complete, so an
interrupted run leaves only whole shards and resumes at the first missing one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from analysis.encoding.lc0_planes import ROW_BYTES

PLAN_FILE = "plan.parquet"
ANNOTATED_DIR = "annotated"
CARD_FILE = "card.json"
PLANES_BYTES = ROW_BYTES  # 112 lc0 bitboards, little-endian uint64 each

PLAN_SCHEMA = pa.schema([
    ("fen", pa.string()),
    ("history_fen", pa.string()),
    ("history_moves", pa.string()),
    ("game_id", pa.string()),
    ("ply", pa.int32()),
    ("source", pa.string()),
    ("split", pa.string()),
    ("priority", pa.float32()),
])

ANNOTATED_SCHEMA = pa.schema(list(PLAN_SCHEMA) + [
    ("planes", pa.binary(PLANES_BYTES)),  # what the network sees (analysis.encoding.pack)
    ("rule50", pa.int16()),
    ("win", pa.float32()),  # Stockfish win probability for the side to move
    ("cp", pa.int32()),  # null when Stockfish reports a mate
    ("mate", pa.int32()),  # moves to mate, side to move's view; null otherwise
    ("wdl", pa.list_(pa.float32(), 3)),  # UCI_ShowWDL, side to move's view, sums to 1
    ("best_move", pa.string()),  # UCI
    ("best_index", pa.int16()),  # lc0 policy index (analysis.encoding.move_to_index)
    ("legal_indices", pa.list_(pa.int16())),
    ("action_indices", pa.list_(pa.int16())),  # null unless multipv-annotated
    ("action_win", pa.list_(pa.float32())),  # win probability after each of those moves
])


def write_table_atomic(table: pa.Table, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp, compression="zstd", row_group_size=4096)
    os.replace(tmp, path)


def shard_path(root: Path, index: int) -> Path:
    return root / ANNOTATED_DIR / f"shard-{index:05d}.parquet"


def annotated_shards(root: Path) -> list[Path]:
    return sorted((root / ANNOTATED_DIR).glob("shard-*.parquet"))


def read_annotated(root: Path, *, columns: Iterable[str] | None = None, split: str | None = None) -> pa.Table:
    """All complete shards as one table, optionally one split only."""
    shards = annotated_shards(root)
    if not shards:
        raise FileNotFoundError(f"no annotated shards under {root / ANNOTATED_DIR}")
    cols = list(columns) if columns is not None else None
    if cols is not None and split is not None and "split" not in cols:
        cols.append("split")
    table = pa.concat_tables(pq.read_table(p, columns=cols) for p in shards)
    if split is not None:
        table = table.filter(pa.compute.equal(table["split"], split))
    return table


def read_card(root: Path) -> dict:
    path = root / CARD_FILE
    return json.loads(path.read_text()) if path.exists() else {}


def update_card(root: Path, section: str, values: dict) -> dict:
    card = read_card(root)
    card[section] = values
    tmp = root / (CARD_FILE + ".tmp")
    tmp.write_text(json.dumps(card, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, root / CARD_FILE)
    return card
