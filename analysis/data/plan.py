"""Build the annotation plan: gather sources, deduplicate, split by game, order tactics first."""

from __future__ import annotations

import hashlib
import multiprocessing as mp
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import chess
import pyarrow as pa
from tqdm import tqdm

from analysis.data.held_out import held_out_keys
from analysis.data.stockfish_games import StockfishGamesConfig, play_stockfish_game
from analysis.data.sources import (PositionSource, blunder_mate_positions, eco_openings, mate_in_one_positions,
                                  opening_parents, perturb, pgn_positions, tactical_score, thin)
from analysis.data.store import PLAN_FILE, PLAN_SCHEMA, update_card, write_table_atomic
from analysis.engines.pool import init_worker_engine
from analysis.engines.stockfish import require_stockfish


@dataclass
class GenerateConfig:
    pgn_files: list[Path] = field(default_factory=list)
    openings_dir: Path | None = None
    selfplay_games: int = 0
    selfplay: StockfishGamesConfig = StockfishGamesConfig()
    perturb_share: float = 0.5  # chance of adding one perturbed child per source position
    thinned_share: float = 0.0  # chance of adding one thinned child (pieces removed; sources.thin) per PGN position
    min_ply: int = 0
    # Positions of a game's first plies are kept once per game, as often as they occur in
    # real games, not once overall: deduplicated away, the start position and the first
    # moves (the only positions with short or empty history planes) were almost absent.
    opening_plies: int = 8
    mate_in_one_positions: int = 0  # random-play positions with a mate in one for the mover (sources.py)
    # Positions after each legal move out of the first N plies of every ECO line and game
    # that allow a mate in one (Scholar's mate after 3...Nf6??); 0 adds none.
    blunder_mate_plies: int = 0
    test_share: float = 0.05  # share of games held out for the test split
    max_positions: int | None = None  # cap on the plan size after ordering
    tactical_weight: float = 1.0  # how strongly tactical positions are moved up the plan
    workers: int = max(1, mp.cpu_count())
    stockfish: str | None = None
    seed: int = 0


def position_key(fen: str) -> str:
    """Dedup key: placement, side to move, castling, en passant (move counters ignored)."""
    return " ".join(fen.split()[:4])


def game_split(game_id: str, test_share: float, seed: int) -> str:
    digest = hashlib.sha256(f"{seed}:{game_id}".encode()).digest()
    return "test" if int.from_bytes(digest[:8], "little") / 2**64 < test_share else "train"


def _selfplay_task(task: tuple) -> list[PositionSource]:
    opening, game_id, seed, config = task
    return play_stockfish_game(opening, game_id, seed, config)


def _selfplay_positions(cfg: GenerateConfig, rng: random.Random) -> list[PositionSource]:
    if cfg.selfplay_games <= 0:
        return []
    if cfg.openings_dir is None:
        raise ValueError("self-play needs an openings directory")
    openings = eco_openings(cfg.openings_dir)
    tasks = []
    for i in range(cfg.selfplay_games):
        opening = rng.choice(openings)
        tasks.append((opening, f"selfplay:{cfg.seed}:{i}", rng.randrange(2**31), cfg.selfplay))
    out: list[PositionSource] = []
    path = require_stockfish(cfg.stockfish)
    with mp.Pool(cfg.workers, initializer=init_worker_engine, initargs=(path,)) as pool:
        for positions in tqdm(pool.imap_unordered(_selfplay_task, tasks), total=len(tasks),
                              desc="self-play games", unit="game"):
            out.extend(positions)
    return out


def build_plan(cfg: GenerateConfig, out_dir: Path) -> dict:
    """Write ``plan.parquet`` under ``out_dir`` and the card's ``generate`` section; returns it."""
    if not 0 <= cfg.test_share < 1:
        raise ValueError("test_share must be in [0, 1)")
    for name in ("perturb_share", "thinned_share"):
        if not 0 <= getattr(cfg, name) <= 1:
            raise ValueError(f"{name} must be in [0, 1]")
    started = time.time()
    rng = random.Random(cfg.seed)
    candidates = _candidates(cfg, rng)
    unique = _unique(candidates, cfg)
    rows, priorities = _prioritised(unique, cfg, rng)
    table = pa.table({
        "fen": [r.fen for r in rows],
        "history_fen": [r.history_fen for r in rows],
        "history_moves": [r.history_moves for r in rows],
        "game_id": [r.game_id for r in rows],
        "ply": [r.ply for r in rows],
        "source": [r.source for r in rows],
        "split": [game_split(r.game_id, cfg.test_share, cfg.seed) for r in rows],
        "priority": priorities,
    }, schema=PLAN_SCHEMA)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_table_atomic(table, out_dir / PLAN_FILE)
    summary = _summary(cfg, table, len(candidates), len(unique), time.time() - started)
    update_card(out_dir, "generate", summary)
    return summary


def _candidates(cfg: GenerateConfig, rng: random.Random) -> list[PositionSource]:
    """Every source's positions, perturbed and thinned children included, before de-duplication."""
    candidates: list[PositionSource] = []
    for source, board in tqdm(pgn_positions(cfg.pgn_files, min_ply=cfg.min_ply), desc="PGN positions", unit="pos"):
        candidates.append(source)
        if rng.random() < cfg.perturb_share:
            child = perturb(board, rng, source.game_id)
            if child is not None:
                candidates.append(child)
        # Draw only when thinning is asked for, so plans built without it are unchanged.
        if cfg.thinned_share and rng.random() < cfg.thinned_share:
            child = thin(board, rng, source.game_id)
            if child is not None:
                candidates.append(child)
    for source in _selfplay_positions(cfg, rng):
        candidates.append(source)
        if rng.random() < cfg.perturb_share:
            child = perturb(source.board(), rng, source.game_id)
            if child is not None:
                candidates.append(child)
    candidates.extend(mate_in_one_positions(cfg.mate_in_one_positions, rng))
    if cfg.blunder_mate_plies > 0:
        openings = eco_openings(cfg.openings_dir) if cfg.openings_dir else []
        parents = opening_parents(openings, cfg.pgn_files, cfg.blunder_mate_plies)
        candidates.extend(tqdm(blunder_mate_positions(parents), desc="blunder mates", unit="pos"))
    return candidates


def _unique(candidates: list[PositionSource], cfg: GenerateConfig) -> list[PositionSource]:
    """One of each position (per game within the opening plies), the held-out ones dropped."""
    held_out = held_out_keys()  # the value sanity suite's own positions are a test: never training data
    seen: set[str] = set()
    unique: list[PositionSource] = []
    for source in candidates:
        key = position_key(source.fen)
        if key in held_out:
            continue
        if source.source != "perturb" and source.ply < cfg.opening_plies:
            key = f"{source.game_id} {key}"
        if key not in seen:
            seen.add(key)
            unique.append(source)
    return unique


def _prioritised(unique: list[PositionSource], cfg: GenerateConfig,
                 rng: random.Random) -> tuple[list[PositionSource], list[float]]:
    """Tactics first: a weighted random order (Efraimidis-Spirakis keys u^(1/w)), so a run cut short
    has spent its Stockfish time on the richest positions while quiet ones still appear; the rows
    kept (``max_positions``) and their keys."""
    priorities = []
    for source in unique:
        weight = 1.0 + cfg.tactical_weight * tactical_score(chess.Board(source.fen))
        priorities.append(rng.random() ** (1.0 / weight))
    order = sorted(range(len(unique)), key=lambda i: -priorities[i])
    if cfg.max_positions is not None:
        order = order[: cfg.max_positions]
    return [unique[i] for i in order], [priorities[i] for i in order]


def _summary(cfg: GenerateConfig, table: pa.Table, candidates: int, unique: int, seconds: float) -> dict:
    """The card's ``generate`` section."""
    def count(column: str) -> dict[str, int]:
        values = table[column].to_pylist()
        return {v: values.count(v) for v in sorted(set(values))}

    return {
        "pgn_files": [p.name for p in cfg.pgn_files],
        "openings_dir": str(cfg.openings_dir) if cfg.openings_dir else None,
        "selfplay_games": cfg.selfplay_games,
        "selfplay_limit": cfg.selfplay.limit.describe(),
        "selfplay_near_best": cfg.selfplay.near_best,
        "perturb_share": cfg.perturb_share,
        "thinned_share": cfg.thinned_share,
        "opening_plies": cfg.opening_plies,
        "mate_in_one_positions": cfg.mate_in_one_positions,
        "blunder_mate_plies": cfg.blunder_mate_plies,
        "test_share": cfg.test_share,
        "seed": cfg.seed,
        "candidates": candidates,
        "unique_positions": unique,
        "planned_positions": table.num_rows,
        "by_source": count("source"),
        "by_split": count("split"),
        "games": len(set(table["game_id"].to_pylist())),
        "seconds": round(seconds, 1),
    }
