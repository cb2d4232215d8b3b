"""Stockfish self-play from ECO openings, sampling among near-best moves for variety.

A pure best-move self-play repeats itself; picking uniformly among the moves
within ``near_best`` win probability of Stockfish's best keeps games sound
but different (our choice, in the spirit of ChessBench's diverse game pool).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import chess

from analysis.data.sources import Opening, PositionSource, from_board
from analysis.engines.limit import EngineLimit
from analysis.engines.pool import worker_engine
from analysis.engines.scores import win_probability


@dataclass(frozen=True)
class StockfishGamesConfig:
    """How Stockfish plays the dataset's games (``data generate --selfplay-games``)."""

    limit: EngineLimit = EngineLimit(nodes=1000)
    candidates: int = 4  # multipv width
    near_best: float = 0.03  # win-probability window around the best move
    max_plies: int = 200


def play_stockfish_game(opening: Opening, game_id: str, seed: int,
                        config: StockfishGamesConfig) -> list[PositionSource]:
    """Play one game in the calling worker's engine; every non-terminal position after the opening."""
    rng = random.Random(seed)
    engine = worker_engine()
    board = chess.Board()
    for move in opening.moves:
        board.push(move)
    positions: list[PositionSource] = []
    while not board.is_game_over(claim_draw=True) and board.ply() < config.max_plies:
        positions.append(from_board(board, game_id, "selfplay"))
        infos = engine.analyse(board, config.limit.limit(), multipv=config.candidates)
        scored = [(win_probability(info["score"], board.turn), info["pv"][0]) for info in infos if info.get("pv")]
        if not scored:
            break
        best = max(p for p, _ in scored)
        choices = [move for p, move in scored if p >= best - config.near_best]
        board.push(rng.choice(choices))
    return positions
