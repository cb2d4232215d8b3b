"""The master games' positions, game by game, dealt out to the first shards in file order."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import chess

from analysis.data.sources import PositionSource, from_board, pgn_games

SOURCE = "master"


@dataclass(frozen=True)
class MasterGame:
    game_id: str
    start_fen: str
    moves: tuple[chess.Move, ...]

    def positions(self) -> list[PositionSource]:
        """Every non-terminal position, the first included (as ``analysis.data.sources.pgn_positions``)."""
        board = chess.Board(self.start_fen)
        out = []
        for move in (None, *self.moves):
            if move is not None:
                board.push(move)
            if not board.is_game_over():
                out.append(from_board(board, self.game_id, SOURCE))
        return out


def corpus_game_id(pgn_game_id: str) -> str:
    """A master game's id in the corpus (its split unit), from ``pgn_games``'s file:index id."""
    return f"{SOURCE}:{pgn_game_id}"


def master_games(pgn_files: list[Path]) -> list[MasterGame]:
    """The games' moves in file order (positions are made per shard: a few games each)."""
    return [MasterGame(corpus_game_id(game_id), game.board().fen(), tuple(game.mainline_moves()))
            for game_id, game in pgn_games(pgn_files)]


def shard_masters(games: list[MasterGame], index: int, per_shard: int) -> list[PositionSource]:
    """The positions of shard ``index``'s master games: games [index * per_shard, ...)."""
    return [p for game in games[index * per_shard:(index + 1) * per_shard] for p in game.positions()]
