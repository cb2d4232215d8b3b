"""One shard from its index alone: generate, drop held-out and repeated positions, label.

Shard ``i`` holds the master games dealt to it (``masters.shard_masters``) and, for each Maia in
turn, ``games_per_maia`` self-play games drawn from ``numpy.random.default_rng([seed, i])``. It
keeps the first occurrence of each position (Polyglot Zobrist key), once per game before ply
``opening_plies``, and none of the held-out ones; positions already in earlier shards are dropped
when the shard is committed (``build``), so a shard's bytes depend on the seed, its index and the
shards before it, not on the workers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.polyglot
import numpy as np
import pyarrow as pa
import torch

from analysis.checkpoint import load_evaluator
from analysis.corpus.config import CorpusConfig
from analysis.corpus.label import Labeller, Labels
from analysis.corpus.masters import master_games, shard_masters
from analysis.corpus.selfplay import play_games
from analysis.corpus.uci import position_command
from analysis.data.held_out import held_out_zobrist
from analysis.data.plan import game_split
from analysis.data.sources import PositionSource, eco_openings

SCHEMA = pa.schema([
    ("key", pa.uint64()),  # Polyglot Zobrist hash: the dedup key (placement, side, castling, en passant)
    ("fen", pa.string()),
    ("history_fen", pa.string()),  # as analysis.data.store.PLAN_SCHEMA: up to 7 plies back ...
    ("history_moves", pa.string()),  # ... and the UCI moves since, for lc0's history planes
    ("game_id", pa.string()),  # the split unit
    ("ply", pa.int32()),
    ("source", pa.string()),  # maia-1100, maia-1500, maia-1900 or master
    ("opening", pa.string()),  # the named line a self-play game started from (ECO code), null for masters
    ("split", pa.string()),  # train / test, by game (analysis.data.plan.game_split)
    ("win", pa.float32()),  # Stockfish win probability for the side to move
    ("cp", pa.int32()),  # null when Stockfish reports a mate
    ("mate", pa.int32()),
    ("wdl", pa.list_(pa.uint16(), 3)),  # UCI_ShowWDL permille, side to move
    ("best_move", pa.string()),  # UCI
    ("top_moves", pa.list_(pa.string())),  # Stockfish's top k lines' first moves, best first
    ("top_win", pa.list_(pa.float32())),  # their win probabilities
])


@dataclass
class ShardStats:
    index: int
    candidates: int = 0
    held_out: int = 0
    repeated: int = 0  # repeats within the shard
    earlier: int = 0  # in an earlier shard (counted at commit)
    rows: int = 0
    by_source: dict[str, int] = field(default_factory=dict)
    generate_s: float = 0.0
    label_s: float = 0.0


class ShardMaker:
    """What a worker loads once (Maias, openings, master games, held-out keys, Stockfish)."""

    def __init__(self, cfg: CorpusConfig, stockfish: str):
        torch.set_num_threads(1)
        self.cfg = cfg
        self.players = {Path(p).name.removesuffix(".safetensors"): load_evaluator(p, device="cpu") for p in cfg.maias}
        self.openings = eco_openings(cfg.openings_dir)
        self.masters = master_games(list(cfg.pgn_files))
        self.held_out = held_out_zobrist(cfg.puzzle_files, cfg.suite_files)
        self.labeller = Labeller(stockfish, nodes=cfg.nodes, top_k=cfg.top_k, hash_mb=cfg.hash_mb)
        self.opening_labels: dict[str, Labels] = {}  # by the UCI position command

    def make(self, index: int) -> tuple[pa.Table, ShardStats]:
        stats = ShardStats(index)
        started = time.perf_counter()
        candidates = self.candidates(index)
        stats.candidates = len(candidates)
        kept, keys, openings = [], [], []
        seen: set[int | tuple[str, int]] = set()
        for source, opening in candidates:
            board = source.board()
            key = chess.polyglot.zobrist_hash(board)
            once = (source.game_id, key) if source.ply < self.cfg.opening_plies else key
            if key in self.held_out:
                stats.held_out += 1
            elif once in seen:
                stats.repeated += 1
            else:
                seen.add(once)
                kept.append((source, board))
                keys.append(key)
                openings.append(opening)
        stats.generate_s = time.perf_counter() - started
        started = time.perf_counter()
        labels = [self.label(source, board) for source, board in kept]
        stats.label_s = time.perf_counter() - started
        table = self.table([s for s, _ in kept], keys, openings, labels)
        return table, stats

    def label(self, source: PositionSource, board: chess.Board) -> Labels:
        """Stockfish's labels; an opening position's are remembered, since it recurs game after game
        (the labeller's answer depends on its input alone, so the bytes are those of a fresh search)."""
        if source.ply >= self.cfg.opening_plies:
            return self.labeller.label(board)
        command = position_command(board)
        if command not in self.opening_labels:
            self.opening_labels[command] = self.labeller.label(board)
        return self.opening_labels[command]

    def candidates(self, index: int) -> list[tuple[PositionSource, str | None]]:
        """(position, opening ECO code or None) in a fixed order: master games, then each Maia's games."""
        cfg = self.cfg
        out: list[tuple[PositionSource, str | None]] = [
            (s, None) for s in shard_masters(self.masters, index, cfg.masters_per_shard)]
        rng = np.random.default_rng([cfg.seed, index])
        for name, player in self.players.items():
            games = play_games(player, name, self.openings, cfg.games_per_maia, rng,
                               id_prefix=f"{name}:{cfg.seed}:{index}", temperature=cfg.temperature,
                               max_plies=cfg.max_plies, opening_plies=cfg.opening_plies)
            out.extend((position, game.opening.eco) for game in games for position in game.positions)
        return out

    def table(self, sources: list[PositionSource], keys: list[int], openings: list[str | None], labels) -> pa.Table:
        split = {g: game_split(g, self.cfg.test_share, self.cfg.seed) for g in {s.game_id for s in sources}}
        return pa.table({
            "key": pa.array(keys, pa.uint64()),
            "fen": [s.fen for s in sources],
            "history_fen": [s.history_fen for s in sources],
            "history_moves": [s.history_moves for s in sources],
            "game_id": [s.game_id for s in sources],
            "ply": [s.ply for s in sources],
            "source": [s.source for s in sources],
            "opening": openings,
            "split": [split[s.game_id] for s in sources],
            "win": [lab.win for lab in labels],
            "cp": [lab.cp for lab in labels],
            "mate": [lab.mate for lab in labels],
            "wdl": [list(lab.wdl) if lab.wdl else None for lab in labels],
            "best_move": [lab.best_move for lab in labels],
            "top_moves": [lab.top_moves for lab in labels],
            "top_win": [lab.top_win for lab in labels],
        }, schema=SCHEMA)

    def close(self) -> None:
        self.labeller.close()
