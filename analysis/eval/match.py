"""Matches between two agents from ECO openings, colours swapped, PGNs saved.

Each sampled opening is played twice, once with each agent as White, so
opening bias cancels. 5x5 Gardner chess (``variant="gardner"``) has no opening
book: its matches start from the legal two-ply lines (``gardner_openings``).
A game ends at checkmate, stalemate, insufficient material, a claimable
threefold repetition or fifty-move draw, or at ``max_plies`` (scored a draw
and marked in the PGN).
"""

from __future__ import annotations

import datetime
import random
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.pgn
from tqdm import tqdm

from analysis.data.sources import Opening
from analysis.eval.agents import Agent, StockfishAgent
from analysis.eval.elo import elo_difference
from analysis.gardner import GARDNER_START, GardnerBoard, opening_lines, variant_board
from analysis.variants import BOARD_SIZE


@dataclass
class MatchResult:
    a: str
    b: str
    wins: int = 0  # for a
    draws: int = 0
    losses: int = 0
    games: list[chess.pgn.Game] = field(default_factory=list)

    def summary(self) -> dict:
        return {"a": self.a, "b": self.b, **elo_difference(self.wins, self.draws, self.losses)}


class GardnerGame(chess.pgn.Game):
    """A PGN game on the 5x5 board: python-chess knows no Gardner variant, so its FEN header is
    read by ``GardnerBoard`` (the file is for reading by eye; chess.pgn cannot read it back)."""

    def board(self) -> chess.Board:
        return GardnerBoard(self.headers.get("FEN", GARDNER_START))


def gardner_openings(plies: int = 2) -> list[Opening]:
    """The Gardner start's legal lines of ``plies`` moves (53 of two), as openings to sample."""
    start = variant_board("gardner")
    return [Opening("", start.variation_san(line), line) for line in opening_lines("gardner", plies)]


def check_plays(agent: Agent, variant: str) -> None:
    """ValueError unless ``agent`` can play ``variant`` (a network reads one board size)."""
    size = BOARD_SIZE[variant]
    if isinstance(agent, StockfishAgent) and size != 8:
        raise ValueError(f"{agent.name}: Stockfish plays 8x8 chess only, not {variant}")
    encoding = getattr(getattr(agent, "evaluator", None), "encoding", None)
    if encoding is not None and encoding.board_size != size:
        raise ValueError(f"{agent.name} reads {encoding.board_size}x{encoding.board_size} boards "
                         f"({encoding.name}): it cannot play {variant} ({size}x{size})")


def play_game(white: Agent, black: Agent, opening: Opening, *, max_plies: int = 400,
              variant: str = "chess") -> chess.pgn.Game:
    board = variant_board(variant)
    for move in opening.moves:
        board.push(move)
    adjudicated = False
    while not board.is_game_over(claim_draw=True):
        if board.ply() >= max_plies:
            adjudicated = True
            break
        agent = white if board.turn == chess.WHITE else black
        move = agent.choose(board)
        if move not in board.legal_moves:
            raise RuntimeError(f"{agent.name} played illegal move {move} in {board.fen()}")
        board.push(move)
    game = (chess.pgn.Game if variant == "chess" else GardnerGame).from_board(board)
    game.headers.update({
        "Event": "Sightline match", "White": white.name, "Black": black.name,
        "Date": datetime.date.today().strftime("%Y.%m.%d"), "ECO": opening.eco, "Opening": opening.name,
    })
    if variant != "chess":
        game.headers["Event"] += f" ({variant})"
    if adjudicated:
        game.headers["Result"] = "1/2-1/2"
        game.headers["Termination"] = f"adjudicated draw at ply {max_plies}"
    else:
        game.headers["Result"] = board.outcome(claim_draw=True).result()
    return game


def play_match(a: Agent, b: Agent, openings: list[Opening], games: int, *, seed: int = 0,
               max_plies: int = 400, pgn_path: Path | None = None, progress: bool = False,
               variant: str = "chess") -> MatchResult:
    """``games`` games (rounded up to even): ``games/2`` openings, each with colours swapped."""
    if games <= 0:
        raise ValueError("games must be positive")
    if not openings:
        raise ValueError("no openings")
    for agent in (a, b):
        check_plays(agent, variant)
    rng = random.Random(seed)
    pairs = (games + 1) // 2
    chosen = [rng.choice(openings) for _ in range(pairs)]
    result = MatchResult(a.name, b.name)
    if pgn_path is not None:
        pgn_path.parent.mkdir(parents=True, exist_ok=True)
        pgn_path.write_text("")
    bar = tqdm(total=2 * pairs, desc=f"{a.name} vs {b.name}", unit="game", disable=not progress)
    for opening in chosen:
        for a_white in (True, False):
            white, black = (a, b) if a_white else (b, a)
            game = play_game(white, black, opening, max_plies=max_plies, variant=variant)
            outcome = game.headers["Result"]
            a_points = {"1-0": 1.0, "0-1": 0.0}.get(outcome, 0.5)
            if not a_white:
                a_points = 1.0 - a_points
            if a_points == 1.0:
                result.wins += 1
            elif a_points == 0.0:
                result.losses += 1
            else:
                result.draws += 1
            result.games.append(game)
            if pgn_path is not None:
                with open(pgn_path, "a", encoding="utf-8") as handle:
                    print(game, file=handle, end="\n\n")
            bar.update(1)
            bar.set_postfix(w=result.wins, d=result.draws, l=result.losses)
    bar.close()
    return result
