"""One self-play game with Gumbel MuZero (the AlphaGateau paper's section 5), and the replay
window its positions go to.

Each move is the search's Gumbel / sequential-halving choice (no temperature,
as the paper); each position's policy target is the search's improved policy
over the legal moves, its value target the game's result for the side to move.
A game longer than the variant's ply limit is a draw (pgx does the same).
"""

from __future__ import annotations

from dataclasses import dataclass

import chess
import numpy as np

from analysis.encoding import Encoding
from analysis.gardner.variants import variant_board
from analysis.search.base import Budget
from analysis.search.gumbel import GumbelMuZero


@dataclass
class Game:
    variant: str
    start_fen: str
    moves: list[str]  # UCI
    targets: list[tuple[np.ndarray, np.ndarray]]  # per position: (policy indices, improved policy)
    result: float  # +1 white won, -1 black won, 0 draw

    def board_at(self, ply: int) -> chess.Board:
        board = variant_board(self.variant, self.start_fen)
        for uci in self.moves[:ply]:
            board.push(chess.Move.from_uci(uci))
        return board

    def value_target(self, ply: int) -> float:
        """The result for the side to move at ``ply`` (white moves at even plies from the start)."""
        white_to_move = (ply % 2 == 0) == (" w " in self.start_fen)
        return self.result if white_to_move else -self.result


def play_game(search: GumbelMuZero, encoding: Encoding, variant: str, simulations: int, ply_limit: int) -> Game:
    board = variant_board(variant)
    game = Game(variant, board.fen(), [], [], 0.0)
    search.reset()  # the network may have changed since the last game: no stale evaluations
    while board.outcome(claim_draw=variant == "chess") is None and board.ply() < ply_limit:
        result = search.run(board, Budget(nodes=simulations))
        moves, indices = encoding.legal_moves(board)
        improved = result.extras["improved_policy"]
        game.targets.append((indices.astype(np.int64), np.array([improved[m] for m in moves], np.float32)))
        game.moves.append(result.best_move.uci())
        board.push(result.best_move)
    outcome = board.outcome(claim_draw=variant == "chess")
    winner = outcome.winner if outcome is not None else None
    game.result = 0.0 if winner is None else (1.0 if winner == chess.WHITE else -1.0)
    return game


class ReplayWindow:
    """The last ``capacity`` positions of the games played (oldest dropped first), sampled uniformly.

    The paper keeps the new positions and a uniform sample of the old window;
    dropping the oldest instead keeps whole recent games, our choice.
    """

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.games: dict[int, Game] = {}
        self.positions: list[tuple[int, int]] = []  # (game id, ply), oldest first
        self._next_id = 0

    def __len__(self) -> int:
        return len(self.positions)

    def add(self, game: Game) -> None:
        gid = self._next_id
        self._next_id += 1
        self.games[gid] = game
        self.positions.extend((gid, ply) for ply in range(len(game.targets)))
        excess = len(self.positions) - self.capacity
        if excess > 0:
            del self.positions[:excess]
            first = self.positions[0][0]
            for old in [g for g in self.games if g < first]:
                del self.games[old]

    def batch(self, picks: np.ndarray, encoding: Encoding, policy_size: int) -> dict[str, np.ndarray]:
        """Inputs and targets of the positions at window offsets ``picks``."""
        boards, policy = [], np.zeros((len(picks), policy_size), np.float32)
        legal = np.zeros((len(picks), policy_size), bool)
        value = np.zeros(len(picks), np.float32)
        for row, offset in enumerate(picks):
            gid, ply = self.positions[int(offset)]
            game = self.games[gid]
            boards.append(game.board_at(ply))
            indices, probs = game.targets[ply]
            policy[row, indices], legal[row, indices] = probs, True
            value[row] = game.value_target(ply)
        return {"inputs": encoding.encode(boards), "policy": policy, "legal": legal, "value": value}

    def state(self) -> dict:
        return {"capacity": self.capacity, "games": self.games, "positions": list(self.positions),
                "next_id": self._next_id}

    @classmethod
    def from_state(cls, state: dict) -> "ReplayWindow":
        window = cls(state["capacity"])
        window.games, window.positions, window._next_id = state["games"], list(state["positions"]), state["next_id"]
        return window
