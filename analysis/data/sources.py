"""Where training positions come from.

Every source yields ``PositionSource`` rows that keep the position's recent
history (a FEN up to 7 plies back plus the moves since), so the network sees
the same lc0 history planes at training time as it does in a real game.
"""

from __future__ import annotations

import csv
import io
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

import chess
import chess.pgn

from analysis.material import CAPTURER_VALUES

HISTORY_PLIES = 7  # lc0 input: the current board plus 7 earlier ones


@dataclass
class PositionSource:
    """One candidate training position, before annotation."""

    fen: str  # the position itself
    history_fen: str  # position HISTORY_PLIES (or fewer) plies earlier
    history_moves: str  # space-separated UCI moves from history_fen to fen
    game_id: str  # split unit: positions of one game never straddle train/test
    ply: int
    source: str  # "pgn", "selfplay", "perturb", "thinned", "mate-in-one", "blunder-mate" (plan) or "refute" (annotate)

    def board(self) -> chess.Board:
        """The position with its recent move stack (what ``pack`` needs)."""
        board = chess.Board(self.history_fen)
        for uci in self.history_moves.split():
            board.push_uci(uci)
        return board


def from_board(board: chess.Board, game_id: str, source: str) -> PositionSource:
    """Snapshot ``board`` (with its move stack) as a ``PositionSource``."""
    moves = board.move_stack[-HISTORY_PLIES:] if board.move_stack else []
    scratch = board.copy(stack=True)
    for _ in moves:
        scratch.pop()
    return PositionSource(
        fen=board.fen(), history_fen=scratch.fen(), history_moves=" ".join(m.uci() for m in moves),
        game_id=game_id, ply=board.ply(), source=source,
    )


def pgn_games(paths: list[Path]) -> Iterator[tuple[str, chess.pgn.Game]]:
    """(game id, game) for every parsable game in ``paths``; ids are file:index."""
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as handle:
            index = 0
            while True:
                game = chess.pgn.read_game(handle)
                if game is None:
                    break
                if not game.errors and game.headers.get("Variant", "Standard") == "Standard":
                    yield f"{path.stem}:{index}", game
                index += 1


def pgn_positions(paths: list[Path], *, min_ply: int = 0) -> Iterator[tuple[PositionSource, chess.Board]]:
    """Every non-terminal position of every game, the game's first position included.

    The first position matters: it is the only one the network sees with
    empty history planes (lc0 does not fill history at the standard start),
    and leaving it out made the start position's value arbitrary.
    """
    for game_id, game in pgn_games(paths):
        board = game.board()
        if min_ply <= 0 and not board.is_game_over():
            yield from_board(board, game_id, "pgn"), board.copy(stack=True)
        for move in game.mainline_moves():
            board.push(move)
            if board.ply() >= min_ply and not board.is_game_over():
                yield from_board(board, game_id, "pgn"), board.copy(stack=True)


def perturb(board: chess.Board, rng: random.Random, game_id: str) -> PositionSource | None:
    """Giraffe (Lai 2015, section 4.3): one random legal move from a real position.

    The result is a little off the beaten track and often leaves something
    en prise, which is exactly what a tactically aware evaluator must punish.
    """
    moves = list(board.legal_moves)
    if not moves:
        return None
    child = board.copy(stack=True)
    child.push(rng.choice(moves))
    if child.is_game_over():
        return None
    return from_board(child, game_id, "perturb")


def thin(board: chess.Board, rng: random.Random, game_id: str, *, max_removed: int = 12) -> PositionSource | None:
    """A real position with 1 to ``max_removed`` random pieces (not kings) taken off the board.

    Games rarely leave a side a piece or more down for long, and sparse endings
    with a lopsided count (a rook against bare pawns) hardly occur at all, so a
    network that reads only such games learns little of what material is worth.
    Thinned positions, labelled by Stockfish like any other, give it those
    counts. The result has no history (its FEN is all there is), castling
    rights only where king and rook still stand, and no en passant square.
    """
    pieces = [sq for sq, piece in board.piece_map().items() if piece.piece_type != chess.KING]
    if not pieces:
        return None
    child = chess.Board(board.fen())
    for square in rng.sample(pieces, rng.randint(1, min(max_removed, len(pieces)))):
        child.remove_piece_at(square)
    child.castling_rights = child.clean_castling_rights()
    child.ep_square = None
    if not child.is_valid() or child.is_game_over():
        return None
    return from_board(child, game_id, "thinned")


@dataclass
class Opening:
    eco: str
    name: str
    moves: list[chess.Move]


def eco_openings(directory: Path) -> list[Opening]:
    """Named ECO lines from ``{a..e}.tsv`` (columns eco, name, pgn)."""
    files = sorted(directory.glob("*.tsv"))
    if not files:
        raise FileNotFoundError(f"no ECO .tsv files in {directory}")
    openings = []
    for path in files:
        with open(path, encoding="utf-8") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                game = chess.pgn.read_game(io.StringIO(row["pgn"]))
                if game is None or game.errors:
                    continue
                openings.append(Opening(row["eco"], row["name"], list(game.mainline_moves())))
    return openings


def tactical_score(board: chess.Board) -> int:
    """A cheap proxy for 'something is happening here', used to annotate such positions first.

    Counts being in check, checking moves and captures that win material
    outright (the victim is worth at least the capturer, or is undefended).
    """
    score = 2 if board.is_check() else 0
    for move in board.legal_moves:
        if board.is_capture(move):
            victim = board.piece_at(move.to_square)
            victim_value = CAPTURER_VALUES[victim.piece_type] if victim else 1  # en passant
            attacker_value = CAPTURER_VALUES[board.piece_type_at(move.from_square)]
            if victim_value >= attacker_value or not board.is_attacked_by(not board.turn, move.to_square):
                score += 1
        elif board.gives_check(move):
            score += 1
    return min(score, 10)


def has_mate_in_one(board: chess.Board) -> bool:
    for move in board.legal_moves:
        if board.gives_check(move):
            board.push(move)
            mate = board.is_checkmate()
            board.pop()
            if mate:
                return True
    return False


def mate_in_one_positions(count: int, rng: random.Random, *, max_plies: int = 16) -> Iterator[PositionSource]:
    """Positions from random play out of the start where the side to move mates in one.

    Real games and Stockfish's self-play almost never leave a mate in one on
    the board in the opening, so a network trained on them values Scholar's
    mate or Fool's mate as a quiet position. Random play leaves the king open
    often (about one position in twenty), which gives such positions cheaply;
    Stockfish labels them like any other.
    """
    found = 0
    game = 0
    while found < count:
        board = chess.Board()
        for _ in range(rng.randint(2, max_plies)):
            if board.is_game_over():
                break
            board.push(rng.choice(list(board.legal_moves)))
        game += 1
        if not board.is_game_over() and has_mate_in_one(board):
            found += 1
            yield from_board(board, f"random:{game}", "mate-in-one")


def blunder_mate_positions(parents: Iterable[tuple[str, chess.Board]]) -> Iterator[PositionSource]:
    """Every legal move out of each parent that allows a mate in one, as the position after it.

    Random play (``mate_in_one_positions``) leaves mates in one in positions
    no one reaches; this gives the ones that real openings invite, such as
    Scholar's mate after 3...Nf6?? or Fool's mate after 2.g4??, with their
    history, so the network learns what an undefended f7 or e1-h4 diagonal
    means. ``parents`` are (game id, board with its move stack).
    """
    for game_id, parent in parents:
        for move in parent.legal_moves:
            child = parent.copy(stack=True)
            child.push(move)
            if not child.is_game_over() and has_mate_in_one(child):
                yield from_board(child, game_id, "blunder-mate")


def opening_parents(openings: list[Opening], pgn_files: list[Path], max_ply: int) -> Iterator[tuple[str, chess.Board]]:
    """Positions before ply ``max_ply`` of every ECO line and game, each once (first seen wins).

    ECO lines get their own game id per position, so the train/test split
    spreads them; game positions keep their game's id, so a held-out game's
    children stay held out.
    """
    seen: set[str] = set()

    def fresh(board: chess.Board) -> bool:
        key = board.epd()
        if key in seen or board.is_game_over():
            return False
        seen.add(key)
        return True

    for opening in openings:
        board = chess.Board()
        for move in [None, *opening.moves]:
            if move is not None:
                board.push(move)
            if board.ply() >= max_ply:
                break
            if fresh(board):
                yield f"eco:{board.epd()}", board.copy(stack=True)
    for game_id, game in pgn_games(pgn_files):
        board = game.board()
        for move in [None, *game.mainline_moves()]:
            if move is not None:
                board.push(move)
            if board.ply() >= max_ply:
                break
            if fresh(board):
                yield game_id, board.copy(stack=True)
