"""Move-choosing agents for puzzles, suites and matches.

- ``SearchAgent``: a checkpoint's evaluator driven by a search from
  ``analysis.search`` ("policy" = argmax policy, "value" = depth-1: the move
  that leaves the opponent the lowest expected score, ...).
- ``MaterialGreedyAgent``: the 1-ply baseline.
- ``StockfishAgent``: Stockfish, optionally weakened with UCI_LimitStrength/UCI_Elo.

Agent specs (CLI) are read by ``analysis.eval.specs.resolve_agent``: ``PATH:ALGO[:NODES]``,
``material-greedy`` and ``stockfish[:elo=1350][,movetime=0.05][,nodes=N][,depth=N]``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol

import chess
import chess.engine

from analysis.engines.stockfish import require_stockfish
from analysis.material import material_balance

class Agent(Protocol):
    name: str

    def choose(self, board: chess.Board) -> chess.Move: ...

    def close(self) -> None: ...


class SearchAgent:
    """An evaluator plus a named search; ``nodes`` and ``movetime_ms`` are the search budget
    (ignored by policy/value), whichever is reached first."""

    def __init__(self, evaluator, algo: str, nodes: int | None = None, *, name: str | None = None,
                 movetime_ms: int | None = None):
        from analysis.search import Budget, make_search

        self.search = make_search(algo, evaluator)
        self.budget = Budget(nodes=nodes, movetime_ms=movetime_ms) if nodes or movetime_ms else None
        self.algo = algo
        self.evaluator = evaluator
        self.name = name or (f"{getattr(evaluator, 'name', 'model')}:{algo}" + (f":{nodes}" if nodes else "")
                             + (f":{movetime_ms}ms" if movetime_ms else ""))

    def choose(self, board: chess.Board) -> chess.Move:
        result = self.search.run(board, self.budget)
        if result.best_move is None:
            raise ValueError("no legal move")
        return result.best_move

    def close(self) -> None:
        pass


class MaterialGreedyAgent:
    """1-ply baseline: the move that maximises material after it; mate beats everything.

    Ties (most quiet positions) are broken at random with a fixed seed, so a
    run is reproducible and the baseline does not always play the first move.
    """

    name = "material-greedy"

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)

    def choose(self, board: chess.Board) -> chess.Move:
        best, best_moves = None, []
        for move in board.legal_moves:
            board.push(move)
            value = 1000 if board.is_checkmate() else material_balance(board, not board.turn)
            board.pop()
            if best is None or value > best:
                best, best_moves = value, [move]
            elif value == best:
                best_moves.append(move)
        if not best_moves:
            raise ValueError("no legal move")
        return self.rng.choice(best_moves)

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class StockfishSettings:
    elo: int | None = None  # UCI_LimitStrength + UCI_Elo when set
    movetime: float | None = 0.05
    nodes: int | None = None
    depth: int | None = None


class StockfishAgent:
    def __init__(self, settings: StockfishSettings, path: str | None = None):
        self.engine = chess.engine.SimpleEngine.popen_uci(require_stockfish(path))
        options = {"Threads": 1, "Hash": 16}
        if settings.elo is not None:
            low = self.engine.options["UCI_Elo"].min
            high = self.engine.options["UCI_Elo"].max
            if not low <= settings.elo <= high:
                self.engine.quit()
                raise ValueError(f"Stockfish UCI_Elo must be in [{low}, {high}], got {settings.elo}")
            options.update({"UCI_LimitStrength": True, "UCI_Elo": settings.elo})
        self.engine.configure(options)
        self.limit = chess.engine.Limit(time=settings.movetime, nodes=settings.nodes, depth=settings.depth)
        self.name = f"stockfish-{settings.elo}" if settings.elo else "stockfish"

    def choose(self, board: chess.Board) -> chess.Move:
        return self.engine.play(board, self.limit).move

    def close(self) -> None:
        self.engine.quit()


def parse_stockfish_spec(spec: str) -> StockfishSettings:
    """``stockfish[:elo=1350][,movetime=0.05][,nodes=N][,depth=N]``."""
    _, _, rest = spec.partition(":")
    values: dict = {}
    for item in filter(None, rest.replace(":", ",").split(",")):
        key, eq, raw = item.partition("=")
        if not eq or key not in ("elo", "movetime", "nodes", "depth"):
            raise ValueError(f"bad Stockfish option {item!r}: use elo=, movetime=, nodes=, depth=")
        try:
            values[key] = float(raw) if key == "movetime" else int(raw)
        except ValueError:
            raise ValueError(f"bad value in {item!r}") from None
    if "movetime" not in values and ("nodes" in values or "depth" in values):
        values["movetime"] = None
    return StockfishSettings(**values)
