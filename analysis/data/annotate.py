"""Annotate a plan with Stockfish in a process pool, one shard at a time, resumably.

Per position: win probability (ChessBench formula, mates at 0/1), WDL from
``UCI_ShowWDL``, the best move, and for a chosen share of positions (all test
positions by default, for action accuracy and Kendall's tau) the win
probability after every legal move via multipv.

A perturbed child (a random move from a real position) is usually won for
the side to move. On its own it teaches a network that the mover is better:
cf-small, trained on data half made of such children, over-rated the side to
move by about 0.1 in expected score on real game positions. So each child
also yields its refutation, the position after Stockfish's best reply, where
the side that played the random move is to move and usually lost.
"""

from __future__ import annotations

import hashlib
import multiprocessing as mp
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import chess
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from tqdm import tqdm

from analysis.data.sources import PositionSource, from_board
from analysis.data.store import ANNOTATED_SCHEMA, PLAN_FILE, read_card, shard_path, update_card, write_table_atomic
from analysis.encoding import legal_move_indices, move_to_index, pack
from analysis.engines.limit import EngineLimit
from analysis.engines.pool import init_worker_engine, worker_engine
from analysis.engines.scores import win_probability
from analysis.engines.stockfish import require_stockfish, stockfish_version


@dataclass(frozen=True)
class AnnotateConfig:
    limit: EngineLimit = EngineLimit(depth=8)
    multipv_share: float = 0.25  # share of train positions that get action values
    multipv_test: bool = True  # every test position gets action values
    multipv_limit: EngineLimit | None = None  # defaults to ``limit``
    workers: int = max(1, mp.cpu_count())
    shard_size: int = 2048
    max_positions: int | None = None  # annotate only the first N plan rows
    hash_mb: int = 16
    stockfish: str | None = None
    refute_perturbed: bool = True  # annotate each perturbed child's refutation too (see module doc)


def _wants_multipv(fen: str, split: str, cfg: AnnotateConfig) -> bool:
    if split == "test" and cfg.multipv_test:
        return True
    digest = hashlib.sha256(fen.encode()).digest()
    return int.from_bytes(digest[:8], "little") / 2**64 < cfg.multipv_share


def annotate_rows(row: dict, cfg: AnnotateConfig) -> list[dict]:
    """One plan row to its annotated row, plus its refutation's if it is a perturbed child."""
    annotated = annotate_row(row, cfg)
    if not (cfg.refute_perturbed and row["source"] == "perturb"):
        return [annotated]
    board = _board(row)
    board.push_uci(annotated["best_move"])
    if board.is_game_over():
        return [annotated]
    refutation = from_board(board, row["game_id"], "refute")
    return [annotated, annotate_row({**row, **asdict(refutation)}, cfg)]


def _board(row: dict) -> chess.Board:
    return PositionSource(row["fen"], row["history_fen"], row["history_moves"], row["game_id"],
                          row["ply"], row["source"]).board()


def annotate_row(row: dict, cfg: AnnotateConfig) -> dict:
    """One plan row to one annotated row, in the calling worker's engine."""
    engine = worker_engine()
    board = _board(row)
    turn = board.turn
    info = engine.analyse(board, cfg.limit.limit())
    pov = info["score"].pov(turn)
    wdl = info.get("wdl")
    if wdl is not None:
        w, d, l = wdl.pov(turn)
        total = max(w + d + l, 1)
        wdl_values = [w / total, d / total, l / total]
    else:  # engines without UCI_ShowWDL: a decisive split of the win probability
        p = win_probability(info["score"], turn)
        wdl_values = [p, 0.0, 1.0 - p]
    best = info["pv"][0] if info.get("pv") else next(iter(board.legal_moves))
    moves, indices = legal_move_indices(board)
    out = dict(row)
    packed = pack(board)
    out.update(
        planes=packed.bits.astype("<u8").tobytes(), rule50=packed.rule50,
        win=win_probability(info["score"], turn), cp=pov.score(), mate=pov.mate(), wdl=wdl_values,
        best_move=best.uci(), best_index=move_to_index(board, best),
        legal_indices=indices.astype(np.int16).tolist(), action_indices=None, action_win=None,
    )
    if _wants_multipv(row["fen"], row["split"], cfg):
        limit = (cfg.multipv_limit or cfg.limit).limit()
        infos = engine.analyse(board, limit, multipv=len(moves))
        by_move = {i["pv"][0]: win_probability(i["score"], turn) for i in infos if i.get("pv")}
        pairs = [(idx, by_move[m]) for m, idx in zip(moves, indices.tolist()) if m in by_move]
        if pairs:
            out["action_indices"] = [p[0] for p in pairs]
            out["action_win"] = [p[1] for p in pairs]
    return out


_CFG: AnnotateConfig | None = None


def _init(path: str, cfg: AnnotateConfig) -> None:
    global _CFG
    _CFG = cfg
    init_worker_engine(path, cfg.hash_mb)


def _task(row: dict) -> list[dict]:
    assert _CFG is not None
    return annotate_rows(row, _CFG)


def annotate_dataset(root: Path, cfg: AnnotateConfig, *, progress: bool = True) -> dict:
    """Annotate ``root/plan.parquet`` into shards, skipping shards already written."""
    plan_path = root / PLAN_FILE
    if not plan_path.exists():
        raise FileNotFoundError(f"{plan_path} not found: run `python -m analysis generate` first")
    if cfg.shard_size <= 0 or cfg.workers <= 0:
        raise ValueError("shard_size and workers must be positive")
    path = require_stockfish(cfg.stockfish)
    plan = pq.read_table(plan_path)
    total = plan.num_rows if cfg.max_positions is None else min(plan.num_rows, cfg.max_positions)
    n_shards = (total + cfg.shard_size - 1) // cfg.shard_size
    todo = [i for i in range(n_shards) if not shard_path(root, i).exists()]
    done_rows = total - sum(min(cfg.shard_size, total - i * cfg.shard_size) for i in todo)
    previous = read_card(root).get("annotate", {})
    started = time.time()
    version = stockfish_version(path)

    def summary(done: int) -> dict:
        return {
            "stockfish": version,
            "limit": cfg.limit.describe(),
            "multipv_limit": (cfg.multipv_limit or cfg.limit).describe(),
            "multipv_share": cfg.multipv_share,
            "multipv_test": cfg.multipv_test,
            "refute_perturbed": cfg.refute_perturbed,
            "workers": cfg.workers,
            "planned": plan.num_rows,
            "positions": done,
            "shards": len(list((root / "annotated").glob("shard-*.parquet"))),
            "seconds": round(previous.get("seconds", 0.0) + time.time() - started, 1),
            "win_formula": "100 / (1 + exp(-0.00368208 * cp)); mate for the mover 100, against 0",
            "wdl": "Stockfish UCI_ShowWDL (permille, side to move), normalised to sum 1",
        }

    bar = tqdm(total=total, initial=done_rows, desc="annotating", unit="pos", disable=not progress, smoothing=0.05)
    ctx = mp.get_context("fork")
    with ctx.Pool(cfg.workers, initializer=_init, initargs=(path, cfg)) as pool:
        for shard in todo:
            lo, hi = shard * cfg.shard_size, min(total, (shard + 1) * cfg.shard_size)
            rows = plan.slice(lo, hi - lo).to_pylist()
            annotated = []
            for results in pool.imap(_task, rows, chunksize=8):
                annotated.extend(results)
                bar.update(1)
            write_table_atomic(pa.Table.from_pylist(annotated, schema=ANNOTATED_SCHEMA), shard_path(root, shard))
            done_rows += hi - lo
            update_card(root, "annotate", summary(done_rows))  # an interrupted run keeps an honest card
    bar.close()
    final = summary(done_rows)
    update_card(root, "annotate", final)
    return final
