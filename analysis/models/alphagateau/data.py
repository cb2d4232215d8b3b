"""Annotated Parquet rows -> AlphaGateau training batches (supervised, through the shared trainer).

Every row is encoded ONCE, when the dataset is built: the graph input's 0/1 columns are
bit-packed (about 1.2 kB a row on 8x8) and its two fractional node features (the same on
every node) kept as the ply and the no-progress fraction, so a batch is an index into
in-memory arrays plus one ``np.unpackbits``; no chess code runs per batch.

Targets (the AlphaGateau paper trains by self-play; these are our choices for Stockfish data,
as the Chessformer loader makes them):
- policy over the edges: softmax(action win probability / ``policy_temperature``) over the
  multipv-annotated moves (lc0 indices -> edges, ``policy_to_edges``), else one-hot on
  Stockfish's best move;
- value: the expected score for the side to move mapped to [-1, 1], 2 * win - 1, which the
  network's tanh value learns with the squared error (the paper's eq. 10).

Augmentations (training rows only; the Chessformer loader's ``fen_only_share`` and
``colour_flip_share``, for the same value sanity failures: a net trained without them scored
15/30, its FEN-only and colour-mirrored positions valued unlike the same positions with history
or in the other colour). Both are exact and cost a few array writes per batch, so they are drawn
afresh for every batch (as the Chessformer's: seeded by the run's seed and the batch's rows), not
fixed per row when the dataset is built:

- history dropout: with probability ``fen_only_share`` a row's ``HISTORY_FEATURES`` are zeroed,
  which is exactly its FEN's encoding (``analysis.encoding.graph``: a board with no move stack
  differs from the same position with history only there), what the evaluator sees for a pasted FEN;
- colour flip: with probability ``colour_flip_share`` a row becomes its ``Board.mirror()``: the
  features are in the mover's frame, so only ``BLACK_TO_MOVE`` toggles and ``PLY_COUNT`` moves by
  one ply (the mirror keeps the move number); chess is symmetric under it, so the targets stand.
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
from analysis.encoding.graph import (
    BLACK_TO_MOVE,
    HISTORY_FEATURES,
    NO_PROGRESS,
    NODE_FEATURES,
    PLY_COUNT,
    encode_graphs,
    input_width,
    ply_fraction,
)
from analysis.encoding.graph_geometry import board_graph, move_to_edge, policy_to_edges
from analysis.models.alphagateau.config import AlphaGateauConfig

_COLUMNS = ["fen", "history_fen", "history_moves", "game_id", "ply", "source", "win", "best_move",
            "action_indices", "action_win"]
_CHUNK = 4096  # rows encoded at a time (bounds the float32 scratch array)


def board_of_row(row: dict) -> chess.Board:
    """The row's position with its move stack (the history the encoding reads)."""
    return PositionSource(row["fen"], row["history_fen"], row["history_moves"], row["game_id"],
                          row["ply"], row["source"]).board()


def mirrored_plies(plies: np.ndarray, black_to_move: np.ndarray) -> np.ndarray:
    """``Board.ply()`` of each position's ``Board.mirror()``: the move number is kept, so a White
    mover's ply becomes the next (Black's) one and a Black mover's the previous."""
    return plies + np.where(black_to_move, -1, 1)


def check_share(name: str, share: float) -> None:
    if not 0 <= share <= 1:
        raise ValueError(f"{name} must be in [0, 1], not {share}")


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
    graph inputs, "policy" (B, E), "legal" (B, E) bool, "value" (B,) in [-1, 1]. ``fen_only_share``
    and ``colour_flip_share`` are the shares of a batch's rows augmented (module doc)."""

    def __init__(self, roots: Sequence[Path], split: str, config: AlphaGateauConfig, *,
                 policy_temperature: float = 0.02, max_rows: int | None = None,
                 fen_only_share: float = 0.0, colour_flip_share: float = 0.0, seed: int = 0):
        if config.board != 8:
            raise ValueError(f"the annotated datasets are 8x8 chess; the run's network plays {config.board}x"
                             f"{config.board} (set model_overrides = {{board = 8}})")
        if not policy_temperature > 0:
            raise ValueError("policy_temperature must be positive")
        check_share("fen_only_share", fen_only_share)
        check_share("colour_flip_share", colour_flip_share)
        self.fen_only_share, self.colour_flip_share, self.seed = fen_only_share, colour_flip_share, seed
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
        # The two node features that are not 0/1 flags, the same on every node.
        self.plies = np.zeros(self.size, np.int64)  # Board.ply(): PLY_COUNT, which a colour flip moves
        self.no_progress = np.zeros(self.size, np.float32)  # NO_PROGRESS as encoded
        targets = []
        rows = table.to_pylist()
        for start in range(0, self.size, _CHUNK):
            chunk = rows[start:start + _CHUNK]
            boards = [board_of_row(row) for row in chunk]
            self._pack(start, encode_graphs(boards, 8), boards)
            targets.extend(policy_target(board, row["best_move"], row["action_indices"], row["action_win"],
                                         policy_temperature) for board, row in zip(boards, chunk))
        longest = max(len(edges) for edges, _ in targets)
        self.policy_edges = np.full((self.size, longest), -1, np.int16)
        self.policy_probs = np.zeros((self.size, longest), np.float32)
        for i, (edges, probs) in enumerate(targets):
            self.policy_edges[i, :len(edges)], self.policy_probs[i, :len(probs)] = edges, probs
        self.multipv_rows = int(sum(1 for row in rows if row["action_indices"]))

    def _pack(self, start: int, inputs: np.ndarray, boards: list[chess.Board]) -> None:
        rows = slice(start, start + len(inputs))
        self.plies[rows] = [board.ply() for board in boards]
        self.no_progress[rows] = inputs[:, NO_PROGRESS]  # node 0's
        self.bits[rows] = np.packbits(inputs != 0, axis=1)

    def __len__(self) -> int:
        return self.size

    def _augmented(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(FEN-only, colour-flipped) row masks for a batch, drawn from the seed and its rows."""
        rng = np.random.default_rng([self.seed, *idx[:8].tolist()])
        fen_only, flip = rng.random(len(idx)), rng.random(len(idx))
        return fen_only < self.fen_only_share, flip < self.colour_flip_share

    def _node_features(self, idx: np.ndarray, nodes: np.ndarray) -> None:
        """Fill in the fractional features and apply the augmentations, in place (module doc)."""
        fen_only, flip = self._augmented(idx)
        nodes[fen_only, :, HISTORY_FEATURES] = 0.0
        plies = self.plies[idx]
        plies[flip] = mirrored_plies(plies[flip], nodes[flip, 0, BLACK_TO_MOVE] > 0)
        nodes[flip, :, BLACK_TO_MOVE] = 1.0 - nodes[flip, :, BLACK_TO_MOVE]
        nodes[:, :, PLY_COUNT] = ply_fraction(plies, 8)[:, None]
        nodes[:, :, NO_PROGRESS] = self.no_progress[idx, None]

    def __getitem__(self, idx) -> dict[str, torch.Tensor]:
        idx = np.atleast_1d(np.asarray(idx, np.int64))
        tokens = np.unpackbits(self.bits[idx], axis=1, count=self.width).astype(np.float32)
        self._node_features(idx, tokens[:, :self.nodes * NODE_FEATURES].reshape(len(idx), self.nodes, NODE_FEATURES))
        legal = tokens[:, self.nodes * NODE_FEATURES:] > 0
        policy = np.zeros((len(idx), self.edges), np.float32)
        edges = self.policy_edges[idx].astype(np.int64)
        rows, cols = np.nonzero(edges >= 0)
        policy[rows, edges[rows, cols]] = self.policy_probs[idx][rows, cols]
        return {"tokens": torch.from_numpy(tokens), "policy": torch.from_numpy(policy),
                "legal": torch.from_numpy(legal), "value": torch.from_numpy(self.value[idx])}


def make_dataset(roots: Sequence[Path], split: str, config: AlphaGateauConfig, *, max_rows: int | None = None,
                 policy_temperature: float = 0.02, fen_only_share: float = 0.0, colour_flip_share: float = 0.0,
                 seed: int = 0, corpus_children: int = 0) -> GraphDataset:
    """The family's training-data hook (``ModelFamily.dataset``); the run's WDL target does not apply."""
    if corpus_children:
        raise ValueError("corpus_children adds state-value samples: AlphaGateau trains a policy on every row")
    return GraphDataset(roots, split, config, policy_temperature=policy_temperature, max_rows=max_rows,
                        fen_only_share=fen_only_share, colour_flip_share=colour_flip_share, seed=seed)
