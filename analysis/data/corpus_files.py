"""A position corpus's shard files (``analysis.corpus`` builds them): where they live, and reading them.

Below both the builder and the readers (the families' loaders, training, evaluation), so any of
them can read a corpus without importing the builder, which loads networks to play its games.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

SHARD_DIR = "shards"


def shard_path(root: Path, index: int) -> Path:
    return root / SHARD_DIR / f"shard-{index:05d}.parquet"


def committed_shards(root: Path) -> list[Path]:
    """The shards 0, 1, ... present without a gap (a build never leaves one)."""
    out = []
    while shard_path(root, len(out)).exists():
        out.append(shard_path(root, len(out)))
    return out


def is_corpus(root: Path) -> bool:
    return (root / SHARD_DIR).is_dir()


def read_corpus(root: Path, *, columns: Iterable[str] | None = None, split: str | None = None) -> pa.Table:
    """All committed shards as one table (the corpus's own schema), optionally one split only."""
    shards = committed_shards(root)
    if not shards:
        raise FileNotFoundError(f"no corpus shards under {root / SHARD_DIR}")
    cols = None if columns is None else sorted(set(columns) | ({"split"} if split else set()))
    table = pa.concat_tables(pq.read_table(p, columns=cols) for p in shards)
    return table if split is None else table.filter(pc.equal(table["split"], split))
