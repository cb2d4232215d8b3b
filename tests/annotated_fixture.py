"""A small annotated dataset written without Stockfish: random games whose rows carry
material-count targets in the store's schema (lc0 indices, multipv rows and all).

For training smoke tests of families that read the store; not for measuring strength.
"""

from __future__ import annotations

import random
from pathlib import Path

import chess
import pyarrow as pa

from analysis.data.store import ANNOTATED_SCHEMA, shard_path, write_table_atomic
from analysis.encoding import legal_move_indices, move_to_index, pack
from analysis.evaluator import MaterialEvaluator

_MATERIAL = MaterialEvaluator()


def annotated_row(board: chess.Board, game: int, ply: int, split: str, multipv: bool) -> dict:
    """One row of the store for ``board`` (its move stack as the history), material-count targets."""
    moves, indices = legal_move_indices(board)
    successors = []
    for move in moves:
        board.push(move)
        successors.append(1.0 - _MATERIAL.evaluate([board])[0].score)
        board.pop()
    best = max(range(len(moves)), key=successors.__getitem__)
    win = successors[best]
    packed = pack(board)
    return {
        "fen": board.fen(), "history_fen": chess.STARTING_FEN,
        "history_moves": " ".join(m.uci() for m in board.move_stack), "game_id": f"g{game}", "ply": ply,
        "source": "pgn", "split": split, "priority": 0.0,
        "planes": packed.bits.astype("<u8").tobytes(), "rule50": packed.rule50, "win": win, "cp": 0, "mate": None,
        "wdl": [win, 0.0, 1.0 - win], "best_move": moves[best].uci(), "best_index": move_to_index(board, moves[best]),
        "legal_indices": indices.tolist(), "action_indices": indices.tolist() if multipv else None,
        "action_win": successors if multipv else None,
    }


def write_fixture_dataset(root: Path, *, games: int = 6, plies: int = 24, seed: int = 0) -> Path:
    rng = random.Random(seed)
    rows = []
    for game in range(games):
        board = chess.Board()
        split = "test" if game == 0 else "train"
        for ply in range(plies):
            if board.is_game_over():
                break
            rows.append(annotated_row(board, game, ply, split, multipv=ply % 2 == 0 or split == "test"))
            board.push(rng.choice(list(board.legal_moves)))
    write_table_atomic(pa.Table.from_pylist(rows, schema=ANNOTATED_SCHEMA), shard_path(root, 0))
    return root
