"""Annotated Parquet rows -> AlphaGateau training batches (supervised, through the shared trainer).

Every row is encoded ONCE, when the dataset is built: the graph input's 0/1 columns are
bit-packed (about 1.2 kB a row on 8x8) and its two fractional node features (ply count,
no-progress count, the same on every node) kept as two floats, so a batch is an index
into in-memory arrays plus one ``np.unpackbits``; no chess code runs per batch.

Targets (the AlphaGateau paper trains by self-play; these are our choices for Stockfish data,
as the Chessformer loader makes them):
- policy over the edges: softmax(action win probability / ``policy_temperature``) over the
  multipv-annotated moves (lc0 indices -> edges, ``policy_to_edges``), else one-hot on
  Stockfish's best move;
- value: the expected score for the side to move mapped to [-1, 1], 2 * win - 1, which the
  network's tanh value learns with the squared error (the paper's eq. 10).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import chess
import numpy as np
import pyarrow as pa
import torch

from analysis.data.sources import PositionSource
from analysis.data.store import read_annotated
from analysis.encoding.graph import NODE_FEATURES, encode_graphs, input_width
from analysis.encoding.graph_geometry import board_graph, move_to_edge, policy_to_edges
from analysis.models.alphagateau.config import AlphaGateauConfig

_COLUMNS = ["fen", "history_fen", "history_moves", "game_id", "ply", "source", "win", "best_move",
            "action_indices", "action_win"]
# Node features that are fractions, not 0/1 flags (analysis.encoding.graph): plies played, no-progress count.
FRACTIONAL_FEATURES = (113, 118)
_CHUNK = 4096  # rows encoded at a time (bounds the float32 scratch array)


def _board(row: dict) -> chess.Board:
    return PositionSource(row["fen"], row["history_fen"], row["history_moves"], row["game_id"],
                          row["ply"], row["source"]).board()


def policy_target(board: chess.Board, best_move: str, action_indices, action_win,
                  temperature: float) -> tuple[np.ndarray, np.ndarray]:
    """(edges, probabilities) of one row's policy target (module doc)."""
    if action_indices:
        wins = np.asarray(action_win, np.float64) / temperature
        probs = np.exp(wins - wins.max())
        return policy_to_edges(board, np.asarray(action_indices, np.int64)), (probs / probs.sum()).astype(np.float32)
    return np.array([move_to_edge(8, board, chess.Move.from_uci(best_move))]), np.ones(1, np.float32)


class GraphDataset(torch.utils.data.Dataset):
    """Indexed by an array of row numbers; returns a whole batch: "tokens" (B, N * 119 + E) float32
    graph inputs, "policy" (B, E), "legal" (B, E) bool, "value" (B,) in [-1, 1]."""

    def __init__(self, roots: Sequence[Path], split: str, config: AlphaGateauConfig, *,
                 policy_temperature: float = 0.02, max_rows: int | None = None):
        if config.board != 8:
            raise ValueError(f"the annotated datasets are 8x8 chess; the run's network plays {config.board}x"
                             f"{config.board} (set model_overrides = {{board = 8}})")
        if not policy_temperature > 0:
            raise ValueError("policy_temperature must be positive")
        table = pa.concat_tables(read_annotated(Path(r), columns=_COLUMNS, split=split) for r in roots)
        if max_rows is not None:
            table = table.slice(0, max_rows)
        if table.num_rows == 0:
            raise ValueError(f"no '{split}' rows in {', '.join(map(str, roots))}")
        graph = board_graph(8)
        self.nodes, self.edges, self.width = graph.nodes, graph.edges, input_width(8)
        self.size = table.num_rows
        self.value = (2 * table["win"].to_numpy().astype(np.float32) - 1)
        self.bits = np.zeros((self.size, (self.width + 7) // 8), np.uint8)
        self.fractions = np.zeros((self.size, len(FRACTIONAL_FEATURES)), np.float32)
        targets = []
        rows = table.to_pylist()
        for start in range(0, self.size, _CHUNK):
            chunk = rows[start:start + _CHUNK]
            boards = [_board(row) for row in chunk]
            self._pack(start, encode_graphs(boards, 8))
            targets.extend(policy_target(board, row["best_move"], row["action_indices"], row["action_win"],
                                         policy_temperature) for board, row in zip(boards, chunk))
        longest = max(len(edges) for edges, _ in targets)
        self.policy_edges = np.full((self.size, longest), -1, np.int16)
        self.policy_probs = np.zeros((self.size, longest), np.float32)
        for i, (edges, probs) in enumerate(targets):
            self.policy_edges[i, :len(edges)], self.policy_probs[i, :len(probs)] = edges, probs
        self.multipv_rows = int(sum(1 for row in rows if row["action_indices"]))

    def _pack(self, start: int, inputs: np.ndarray) -> None:
        nodes = inputs[:, :self.nodes * NODE_FEATURES].reshape(len(inputs), self.nodes, NODE_FEATURES)
        self.fractions[start:start + len(inputs)] = nodes[:, 0, list(FRACTIONAL_FEATURES)]
        self.bits[start:start + len(inputs)] = np.packbits(inputs != 0, axis=1)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, idx) -> dict[str, torch.Tensor]:
        idx = np.atleast_1d(np.asarray(idx, np.int64))
        tokens = np.unpackbits(self.bits[idx], axis=1, count=self.width).astype(np.float32)
        nodes = tokens[:, :self.nodes * NODE_FEATURES].reshape(len(idx), self.nodes, NODE_FEATURES)
        nodes[:, :, list(FRACTIONAL_FEATURES)] = self.fractions[idx, None, :]
        legal = tokens[:, self.nodes * NODE_FEATURES:] > 0
        policy = np.zeros((len(idx), self.edges), np.float32)
        edges = self.policy_edges[idx].astype(np.int64)
        rows, cols = np.nonzero(edges >= 0)
        policy[rows, edges[rows, cols]] = self.policy_probs[idx][rows, cols]
        return {"tokens": torch.from_numpy(tokens), "policy": torch.from_numpy(policy),
                "legal": torch.from_numpy(legal), "value": torch.from_numpy(self.value[idx])}


def make_dataset(roots: Sequence[Path], split: str, config: AlphaGateauConfig, *, max_rows: int | None = None,
                 policy_temperature: float = 0.02) -> GraphDataset:
    """The family's training-data hook (``ModelFamily.dataset``)."""
    return GraphDataset(roots, split, config, policy_temperature=policy_temperature, max_rows=max_rows)
