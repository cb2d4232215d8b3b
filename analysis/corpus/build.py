"""The resumable corpus build: shards made in parallel, committed in index order, never rewritten.

Layout of a corpus directory::

    shards/shard-00000.parquet ...   write-once shards (temporary name, then an atomic rename)
    card.json                        ``recipe`` (what the bytes depend on) and ``build`` (counts, cost)

A rerun reads the keys of the shards already there and continues at the first missing one; its
recipe must equal the card's. Workers make shards ``i, i+1, ...`` (``shard.ShardMaker``); the main
process commits each in index order, less the positions an earlier shard holds, so the corpus is
the same prefix of one sequence of shards whatever the workers, wall limit or interruptions.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

from analysis.corpus.config import CorpusConfig
from analysis.corpus.label import require_stockfish, stockfish_version
from analysis.corpus.shard import SCHEMA, ShardMaker, ShardStats
from analysis.data.corpus_files import committed_shards, shard_path
from analysis.data.store import read_card, update_card, write_table_atomic


class RecipeMismatch(ValueError):
    """A rerun whose recipe differs from the one the directory was built with."""


@dataclass(frozen=True)
class RunLimits:
    """When this run stops starting shards; none of these changes any shard's bytes."""

    target: int | None = None  # positions in the corpus
    max_shards: int | None = None  # shards in the corpus
    max_wall_minutes: float | None = None  # no shard is started after this; those under way finish
    workers: int = 1


def build_corpus(root: Path, cfg: CorpusConfig, limits: RunLimits, *, stockfish: str | None = None,
                 log=print) -> dict:
    """Build or continue the corpus in ``root``; returns the card's ``build`` section."""
    started = time.monotonic()
    path = require_stockfish(stockfish)
    recipe = cfg.recipe(stockfish_version(path))
    root.mkdir(parents=True, exist_ok=True)
    card = read_card(root)
    if card.get("recipe", recipe) != recipe:
        raise RecipeMismatch(f"{root} was built with another recipe: {_diff(card['recipe'], recipe)}")
    update_card(root, "recipe", recipe)
    done = committed_shards(root)
    keys: set[int] = set()
    for shard in done:
        keys.update(pq.read_table(shard, columns=["key"])["key"].to_pylist())
    totals = card.get("build", {"positions": 0, "shards": []})
    log(f"corpus {root}: {len(done)} shards, {len(keys)} positions; {limits}")

    def may_start(index: int) -> bool:
        if limits.max_shards is not None and index >= limits.max_shards:
            return False
        if limits.target is not None and len(keys) >= limits.target:
            return False
        return limits.max_wall_minutes is None or time.monotonic() - started < 60 * limits.max_wall_minutes

    for table, stats in _made_shards(cfg, path, limits.workers, len(done), may_start):
        table = table.filter([key not in keys or ply < cfg.opening_plies
                              for key, ply in zip(table["key"].to_pylist(), table["ply"].to_pylist())])
        stats.earlier = stats.candidates - stats.held_out - stats.repeated - table.num_rows
        stats.rows = table.num_rows
        stats.by_source = {s: int(n) for s, n in zip(*_counts(table, "source"))}
        write_table_atomic(table, shard_path(root, stats.index))
        keys.update(table["key"].to_pylist())
        totals = _add(totals, stats, len(keys))
        update_card(root, "build", totals)
        log(f"shard {stats.index}: {stats.rows} positions ({stats.candidates} made, {stats.earlier} in earlier "
            f"shards, {stats.held_out} held out), generate {stats.generate_s:.0f} s, label {stats.label_s:.0f} s; "
            f"corpus {len(keys)} positions")
    return totals


def _made_shards(cfg: CorpusConfig, stockfish: str, workers: int, first: int, may_start):
    """Yield (table, stats) of shards ``first``, +1, ... in index order, each started only if
    ``may_start(index)`` then holds; ``workers`` processes make them, one each at a time."""
    if not may_start(first):  # nothing to do: load no network and start no engine
        return
    if workers <= 1:
        maker = ShardMaker(cfg, stockfish)
        try:
            index = first
            while may_start(index):
                yield maker.make(index)
                index += 1
        finally:
            maker.close()
        return
    ctx = mp.get_context("spawn")  # fresh interpreters: no torch or engine threads forked
    with ctx.Pool(workers, initializer=_init_worker, initargs=(cfg, stockfish)) as pool:
        pending = []
        index = first
        while len(pending) < workers and may_start(index):
            pending.append(pool.apply_async(_make, (index,)))
            index += 1
        while pending:
            yield pending.pop(0).get()
            if may_start(index):
                pending.append(pool.apply_async(_make, (index,)))
                index += 1


_MAKER: ShardMaker | None = None


def _init_worker(cfg: CorpusConfig, stockfish: str) -> None:
    global _MAKER
    _MAKER = ShardMaker(cfg, stockfish)


def _make(index: int):
    assert _MAKER is not None
    return _MAKER.make(index)


def _counts(table, column: str):
    counts = pc.value_counts(table[column])
    return counts.field("values").to_pylist(), counts.field("counts").to_pylist()


def _add(totals: dict, stats: ShardStats, positions: int) -> dict:
    shards = [s for s in totals["shards"] if s["index"] != stats.index] + [asdict(stats)]
    return {
        "positions": positions,  # distinct
        "rows": sum(s["rows"] for s in shards),  # the opening plies' positions once per game
        "shards": shards,
        "by_source": _sum(s["by_source"] for s in shards),
        "dropped": _sum({"held_out": s["held_out"], "repeated": s["repeated"], "earlier": s["earlier"]} for s in shards),
        "generate_s": round(sum(s["generate_s"] for s in shards), 1),
        "label_s": round(sum(s["label_s"] for s in shards), 1),
    }


def _sum(dicts) -> dict[str, int]:
    out: dict[str, int] = {}
    for d in dicts:
        for k, v in d.items():
            out[k] = out.get(k, 0) + v
    return dict(sorted(out.items()))


def _diff(old: dict, new: dict) -> str:
    return ", ".join(f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in sorted(set(old) | set(new))
                     if old.get(k) != new.get(k))


def corpus_status(root: Path) -> dict:
    """Counts and cost from the card, checked against the shards on disk."""
    card = read_card(root)
    if "recipe" not in card:
        raise FileNotFoundError(f"{root}: no corpus card (card.json with a recipe)")
    build = card.get("build", {"positions": 0, "shards": []})
    shards = committed_shards(root)
    rows = sum(pq.ParquetFile(p).metadata.num_rows for p in shards)
    distinct = len({key for p in shards for key in pq.read_table(p, columns=["key"])["key"].to_pylist()})
    size = sum(p.stat().st_size for p in shards)
    per_row = 1 / max(rows, 1)
    return {
        "recipe": card["recipe"],
        "shards": len(shards),
        "positions": distinct,
        "rows": rows,  # the opening plies' positions count once per game
        "card_agrees": (rows, distinct, len(shards)) == (build.get("rows", 0), build.get("positions", 0),
                                                         len(build.get("shards", []))),
        "by_source": build.get("by_source", {}),
        "dropped": build.get("dropped", {}),
        "bytes": size,
        "bytes_per_row": round(size * per_row, 1),
        "generate_s": build.get("generate_s", 0.0),
        "label_s": build.get("label_s", 0.0),
        "ms_per_row": {"generate": round(1000 * build.get("generate_s", 0.0) * per_row, 2),
                       "label": round(1000 * build.get("label_s", 0.0) * per_row, 2)},
    }


__all__ = ["SCHEMA", "RecipeMismatch", "RunLimits", "build_corpus", "committed_shards", "corpus_status", "shard_path"]
