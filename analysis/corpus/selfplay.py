"""Maia self-play from named openings, several games per forward pass.

A game starts with a random named opening line and continues with one Maia playing both sides,
each move sampled from its policy at a temperature, so games out of one opening differ. Its
positions are kept from the end of the line on, and the line's positions before ply
``opening_plies`` too: those recur in every game, as the first moves do in real games (the corpus
keeps them once per game); the rest of the line would only repeat itself. The games of one call
advance in lockstep, one batched forward pass a ply, and every random draw comes from the generator given, so a call's games depend on its seed alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import chess
import numpy as np

from analysis.data.sources import Opening, PositionSource, from_board
from analysis.evaluator import Evaluator


@dataclass
class SelfPlayGame:
    game_id: str
    opening: Opening
    board: chess.Board
    positions: list[PositionSource] = field(default_factory=list)


def game_over(board: chess.Board, max_plies: int) -> bool:
    """The ply cap, mate, stalemate, too little material, a threefold repetition or fifty moves.

    Not ``is_game_over(claim_draw=True)``: that also tries every legal move for a repetition
    the mover could claim by playing it, several times the cost of a forward pass.
    """
    return (board.ply() >= max_plies or board.is_game_over() or board.is_repetition(3)
            or board.can_claim_fifty_moves())


def sample_move(policy: dict[chess.Move, float], rng: np.random.Generator) -> chess.Move:
    """One move drawn from a policy over the legal moves (its order is the legal moves' order)."""
    moves = list(policy)
    probs = np.fromiter(policy.values(), np.float64, len(moves))
    return moves[int(rng.choice(len(moves), p=probs / probs.sum()))]


def play_games(player: Evaluator, source: str, openings: list[Opening], count: int, rng: np.random.Generator,
               *, id_prefix: str, temperature: float, max_plies: int, opening_plies: int = 0) -> list[SelfPlayGame]:
    """``count`` games of ``player`` against itself, each from a random opening of ``openings``."""
    games = []
    for number in range(count):
        opening = openings[int(rng.integers(len(openings)))]
        game = SelfPlayGame(f"{id_prefix}:{number}", opening, chess.Board())
        for move in opening.moves:
            if game.board.ply() < opening_plies:
                game.positions.append(from_board(game.board, game.game_id, source))
            game.board.push(move)
        games.append(game)
    active = [g for g in games if not game_over(g.board, max_plies)]
    while active:
        evaluations = player.evaluate([g.board for g in active], temperature=temperature)
        for game, evaluation in zip(active, evaluations):
            game.positions.append(from_board(game.board, game.game_id, source))
            game.board.push(sample_move(evaluation.policy, rng))
        active = [g for g in active if not game_over(g.board, max_plies)]
    return games

