"""What every search shares: budgets, results, progress, cancellation, terminal rules.

A search object is built once per evaluator and may be reused across positions
(MCTS reuses its tree, alpha-beta its transposition table). ``run`` blocks in
the calling thread; ``stop`` may be called from any other thread and returns
the best result so far within 200 ms.
"""

from __future__ import annotations

import math
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Hashable

import chess

from analysis.evaluator import Evaluation, Evaluator, score_to_centipawns
from analysis.search_catalogue import SearchSpec

# How often progress is reported (seconds): about 10 events per second.
PROGRESS_INTERVAL = 0.1
# stop() waits at most this long for the search thread before answering from the last snapshot
# (well under the 200 ms promise, so a loaded machine still keeps it).
STOP_WAIT = 0.1


@dataclass(frozen=True)
class Budget:
    """How much a search may spend. ``None`` everywhere means: until ``stop()``.

    Any limit that is reached ends the search; searches with a fixed amount of
    work (policy, value) ignore the budget.
    """

    nodes: int | None = None
    movetime_ms: int | None = None
    depth: int | None = None

    def __post_init__(self):
        for name in ("nodes", "movetime_ms", "depth"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(f"budget {name} must be a positive integer, got {value!r}")

    @property
    def unlimited(self) -> bool:
        return self.nodes is None and self.movetime_ms is None and self.depth is None


@dataclass
class RootMove:
    """One root move's statistics, from the root side to move's point of view.

    MCTS and Gumbel fill ``visits``, ``q`` (expected score in [0, 1]) and
    ``prior``; alpha-beta and probability search fill ``score`` (expected score;
    ``bound`` says whether it is exact or only an upper bound after a cut-off)
    and ``depth`` (deepest main-search ply reached below this move). MCTS and Gumbel
    also give the move's ``wdl`` (mean over its visits) when the network has a WDL head.
    """

    move: chess.Move
    visits: int | None = None
    q: float | None = None
    prior: float | None = None
    score: float | None = None
    bound: str = "exact"
    depth: int | None = None
    pv: list[chess.Move] = field(default_factory=list)
    wdl: tuple[float, float, float] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"move": self.move.uci(), "visits": self.visits, "q": _round(self.q),
                "prior": _round(self.prior), "score": _round(self.score)}


@dataclass
class SearchResult:
    """A finished search, or a progress snapshot of a running one (``final`` False).

    ``score`` is the expected score in [0, 1] for the side to move at the root;
    ``mate`` is UCI-style mate distance in moves (positive: the side to move
    mates) when the search proved one. ``depth`` is the completed depth
    (iterations for probability search, mean leaf depth for MCTS).
    """

    algo: str
    best_move: chess.Move | None
    pv: list[chess.Move]
    score: float
    wdl: tuple[float, float, float] | None
    nodes: int
    elapsed_s: float
    depth: int = 0
    seldepth: int = 0
    mate: int | None = None
    root: list[RootMove] = field(default_factory=list)
    final: bool = True
    stopped: bool = False
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def nps(self) -> int:
        return int(self.nodes / self.elapsed_s) if self.elapsed_s > 0 else 0

    @property
    def centipawns(self) -> int:
        return score_to_centipawns(self.score)

    def top_root(self, n: int = 5) -> list[RootMove]:
        def key(r: RootMove):
            return (r.visits or 0, r.score if r.score is not None else (r.q if r.q is not None else -1.0),
                    r.prior or 0.0)
        return sorted(self.root, key=key, reverse=True)[:n]

    def to_json(self) -> dict[str, Any]:
        """The CLI's JSON contract: bestmove, pv, score, wdl, nodes, nps, root."""
        return {
            "bestmove": self.best_move.uci() if self.best_move else None,
            "pv": [m.uci() for m in self.pv],
            "score": _round(self.score),
            "wdl": [_round(x) for x in self.wdl] if self.wdl is not None else None,
            "nodes": self.nodes,
            "nps": self.nps,
            "root": [r.to_json() for r in self.top_root(len(self.root))],
        }


ProgressCallback = Callable[[SearchResult], None]


def _round(x: float | None, digits: int = 6) -> float | None:
    return None if x is None else round(float(x), digits)


class StopSearch(Exception):
    """Raised inside a search loop to unwind once the budget or a stop request ends it."""


class SearchControl:
    """Budget, clock, stop flag and rate-limited progress for one ``run``."""

    def __init__(self, budget: Budget, stop_event: threading.Event,
                 progress: ProgressCallback | None, snapshot: Callable[[], SearchResult | None]):
        self.budget = budget
        self.start = time.monotonic()
        self.deadline = (self.start + budget.movetime_ms / 1000.0) if budget.movetime_ms else None
        self._stop_event = stop_event
        self._progress = progress
        self._snapshot = snapshot
        self._last_report = self.start
        self.latest: SearchResult | None = None

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def stop_requested(self) -> bool:
        return self._stop_event.is_set()

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def out_of_nodes(self, nodes: int) -> bool:
        return self.budget.nodes is not None and nodes >= self.budget.nodes

    def should_stop(self, nodes: int) -> bool:
        return self.stop_requested() or self.out_of_time() or self.out_of_nodes(nodes)

    def tick(self) -> None:
        """Report progress if the interval has passed; cheap enough to call every step."""
        now = time.monotonic()
        if now - self._last_report >= PROGRESS_INTERVAL:
            self._last_report = now
            self.publish()

    def publish(self) -> None:
        snap = self._snapshot()
        if snap is None:
            return
        snap.final = False
        snap.elapsed_s = self.elapsed()
        self.latest = snap
        if self._progress is not None:
            self._progress(snap)


class Search(ABC):
    """Base class: one algorithm bound to one evaluator and its settings.

    A concrete search names its catalogue entry in ``spec`` (``analysis.search_catalogue``);
    its ``name`` is the entry's.
    """

    spec: ClassVar[SearchSpec]
    name: ClassVar[str]
    settings_type: ClassVar[type]
    default_budget: ClassVar[Budget] = Budget(nodes=800)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "spec" in cls.__dict__:
            cls.name = cls.spec.name

    def __init__(self, evaluator: Evaluator, settings: Any = None):
        if settings is None:
            settings = self.settings_type()
        if not isinstance(settings, self.settings_type):
            raise TypeError(f"{self.name} search takes {self.settings_type.__name__}, "
                            f"got {type(settings).__name__}")
        self.evaluator = evaluator
        self.settings = settings
        self._stop_event = threading.Event()
        self._done = threading.Event()
        self._done.set()
        self._control: SearchControl | None = None
        self._result: SearchResult | None = None
        self._lock = threading.Lock()

    # -- public API -------------------------------------------------------
    def run(self, board: chess.Board, budget: Budget | None = None,
            progress: ProgressCallback | None = None) -> SearchResult:
        """Search ``board`` (its move stack is the game history) and return the result."""
        with self._lock:
            if not self._done.is_set():
                raise RuntimeError("this search is already running")
            self._done.clear()
        self._stop_event.clear()
        self._result = None
        budget = budget or self.default_budget
        try:
            self._control = SearchControl(budget, self._stop_event, progress, self._snapshot)
            result = self._run(board.copy(), self._control)
            result.elapsed_s = self._control.elapsed()
            result.final = True
            result.stopped = self._stop_event.is_set()
            self._result = result
            if progress is not None:
                progress(result)
            return result
        finally:
            self._done.set()

    def stop(self, timeout: float = STOP_WAIT) -> SearchResult | None:
        """Ask the running search to stop; return its result or the best snapshot so far.

        Safe to call from another thread. Returns within ``timeout`` seconds
        (plus the time to copy a snapshot); ``None`` only when no search ran.
        """
        self._stop_event.set()
        if self._done.wait(timeout) and self._result is not None:
            return self._result
        control = self._control
        if control is None:
            return self._result
        latest = control.latest
        if latest is not None:
            latest.stopped = True
        return latest

    @property
    def running(self) -> bool:
        return not self._done.is_set()

    def reset(self) -> None:
        """Forget state kept between searches (tree, transposition table, caches)."""

    # -- for subclasses ---------------------------------------------------
    @abstractmethod
    def _run(self, board: chess.Board, control: SearchControl) -> SearchResult:
        """Do the search; call ``control.tick()`` often and honour ``control.should_stop``."""

    def _snapshot(self) -> SearchResult | None:
        """The best result so far, built in the search thread for progress events."""
        return None


# -- shared chess rules -------------------------------------------------------

def position_key(board: chess.Board) -> Hashable:
    """Identity of a position for repetition and transposition tables (no history)."""
    return (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
            board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK], board.turn,
            board.castling_rights, board.ep_square)


def draw_by_rule(board: chess.Board, in_search: bool = True) -> bool:
    """Draws a search must see without looking at legal moves.

    Inside the tree a single repetition counts as a draw (as Lc0 and most
    engines do: the side that could deviate will have had its chance); the
    50-move rule and insufficient material are as in the laws.
    """
    if board.halfmove_clock >= 100:
        return True
    if board.is_insufficient_material():
        return True
    return board.is_repetition(2 if in_search else 3)


def terminal_value(board: chess.Board, has_moves: bool | None = None, in_search: bool = True) -> float | None:
    """Value in [-1, 1] for the side to move when the game is over at ``board``, else None.

    ``has_moves``: whether the side to move has a legal move (looked up when not given);
    ``in_search``: as ``draw_by_rule`` (outside a search only a threefold repetition draws).
    Checkmate beats the 50-move rule, so mate is tested first.
    """
    if has_moves is None:
        has_moves = any(board.generate_legal_moves())
    if not has_moves:
        return -1.0 if board.is_check() else 0.0
    if draw_by_rule(board, in_search):
        return 0.0
    return None


def terminal_wdl(value: float) -> tuple[float, float, float]:
    """The WDL of a decided game for the side to move: value 1 won, 0 drawn, -1 lost."""
    if value == 0.0:
        return (0.0, 1.0, 0.0)
    return (1.0, 0.0, 0.0) if value > 0 else (0.0, 0.0, 1.0)


def game_over_result(algo: str, value: float, nodes: int, extras: dict[str, Any] | None = None) -> SearchResult:
    """A search's answer where the game is over: no move, the rules' value and its WDL."""
    return SearchResult(algo, None, [], value_to_score(value), terminal_wdl(value), nodes, 0.0,
                        extras=extras if extras is not None else {})


def evaluation_value(ev: Evaluation) -> tuple[float, float]:
    """(value in [-1, 1], draw probability or NaN when unknown) from an Evaluation."""
    if ev.wdl is not None:
        w, d, l = ev.wdl
        return float(w - l), float(d)
    return 2.0 * float(ev.score) - 1.0, math.nan


def value_to_score(v: float) -> float:
    return min(1.0, max(0.0, 0.5 * (v + 1.0)))


def value_to_wdl(v: float, d: float) -> tuple[float, float, float] | None:
    """WDL from value and draw probability, kept consistent (non-negative, summing to 1)."""
    if math.isnan(d):
        return None
    d = min(max(d, 0.0), 1.0 - abs(v))
    w = max(0.0, 0.5 * (1.0 + v - d))
    l = max(0.0, 0.5 * (1.0 - v - d))
    total = w + d + l
    return (w / total, d / total, l / total)


def mate_moves_from_plies(plies: int) -> int:
    """UCI mate distance in moves from a signed ply count (positive: side to move mates)."""
    return (plies + 1) // 2 if plies > 0 else -((-plies) // 2)

