"""A UCI engine around the searches, usable from any chess GUI.

The main loop reads commands; ``go`` starts the search in a worker thread,
``stop`` asks it to finish (``Search.stop``) and waits for its ``bestmove``.
Progress snapshots become ``info`` lines: depth, seldepth, time, nodes, nps,
``score cp`` (the expected score mapped back through ChessBench's
win-percentage curve) or ``score mate``, ``wdl`` in permille, and the PV.
Malformed input never stops the engine: it answers with ``info string`` and
carries on.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from typing import Callable, TextIO

import chess

from analysis.evaluator import Evaluator, score_to_centipawns
from analysis.positions import board_from_fen, play_uci
from analysis.search.base import Budget, Search, SearchResult
from analysis.search.registry import make_search, make_settings
from analysis.search_catalogue import UCIOption, search_names, search_spec, uci_options

ENGINE_NAME = "Sightline"
DEFAULT_MOVES_TO_GO = 30   # sudden death: plan as if this many moves remain
MIN_THINK_MS = 10
STOP_POLL_S = 0.02         # how often ``stop`` repeats its request until the search thread ends
# ``go``'s tokens that take a number, and those of them that must be positive
GO_NUMBERS = ("wtime", "btime", "winc", "binc", "movestogo", "depth", "nodes", "movetime", "mate")
GO_POSITIVE = ("depth", "nodes", "movetime", "mate", "movestogo")


@dataclass
class Options:
    """The engine's own options; ``search_values`` holds the searches' options set so far
    (by lower-case UCI name), which a search takes when its catalogue entry lists them."""

    algorithm: str = "mcts"
    nodes: int = 0            # node budget for every go without its own limit (0: none)
    device: str = "auto"
    move_overhead_ms: int = 50
    show_wdl: bool = True
    multipv: int = 1          # lines per info block: the best line, then the next root moves
    search_values: dict[str, int | float] = field(default_factory=dict)

    def settings_for(self, algorithm: str) -> dict[str, int | float]:
        """The settings values of ``algorithm`` that its UCI options have set."""
        return {option.setting: self.search_values[option.name.lower()]
                for option in search_spec(algorithm).uci_options if option.name.lower() in self.search_values}


def allocate_time_ms(remaining_ms: int, increment_ms: int, moves_to_go: int | None,
                     overhead_ms: int) -> int:
    """Thinking time for one move: an even share of the clock plus most of the increment.

    Never more than half of what is left after the overhead, and at least a few
    milliseconds so a move always comes back.
    """
    mtg = moves_to_go if moves_to_go and moves_to_go > 0 else DEFAULT_MOVES_TO_GO
    target = remaining_ms / mtg + 0.75 * increment_ms
    ceiling = max(0.0, remaining_ms - overhead_ms) * 0.5
    return int(max(MIN_THINK_MS, min(target, ceiling) - overhead_ms / 4))


def _search_stats(result: SearchResult) -> list[str]:
    return ["depth", str(max(1, result.depth)), "seldepth", str(max(1, result.seldepth, result.depth)),
            "time", str(int(result.elapsed_s * 1000)), "nodes", str(result.nodes), "nps", str(result.nps)]


def format_info(result: SearchResult, show_wdl: bool = True, multipv: int | None = None) -> str:
    parts = ["info"] + (["multipv", str(multipv)] if multipv else []) + _search_stats(result)
    if result.mate is not None:
        parts += ["score", "mate", str(result.mate)]
    else:
        parts += ["score", "cp", str(result.centipawns)]
    if show_wdl and result.wdl is not None:
        w, _, l = result.wdl
        wi, li = int(round(w * 1000)), int(round(l * 1000))
        parts += ["wdl", str(wi), str(1000 - wi - li), str(li)]
    if result.pv:
        parts += ["pv"] + [m.uci() for m in result.pv]
    return " ".join(parts)


def format_multipv(result: SearchResult, show_wdl: bool, lines: int) -> list[str]:
    """``lines`` info lines: the search's best line, then the other root moves in the search's
    order (visits, else score). A root move's score is its own value (alpha-beta's after a
    cut-off is only an upper bound, said so); its PV is its subtree's best line where the
    search keeps a tree, else the move alone."""
    if lines <= 1:
        return [format_info(result, show_wdl)]
    out = [format_info(result, show_wdl, multipv=1)]
    head = _search_stats(result)
    others = [r for r in result.top_root(len(result.root)) if r.move != result.best_move
              and (r.q is not None or r.score is not None)]
    for rank, root in enumerate(others[: lines - 1], start=2):
        value = root.q if root.q is not None else root.score
        score = ["score", "cp", str(score_to_centipawns(value))] + (["upperbound"] if root.bound == "upper" else [])
        out.append(" ".join(["info", "multipv", str(rank), *head, *score, "pv",
                             *(m.uci() for m in (root.pv or [root.move]))]))
    return out


class UCIEngine:
    """The protocol state machine. ``load_evaluator(device)`` builds the model's evaluator."""

    def __init__(self, load_evaluator: Callable[[str | None], Evaluator], *, algorithm: str = "mcts",
                 model_label: str = "", out: TextIO | None = None):
        search_spec(algorithm)  # an unknown name raises ValueError
        self._load = load_evaluator
        self.options = Options(algorithm=algorithm)
        self.evaluator = load_evaluator(None)
        self.model_label = model_label
        self.out = out or sys.stdout
        self.board = chess.Board()
        self._search: Search | None = None
        self._thread: threading.Thread | None = None
        self._thread_search: Search | None = None  # the search the worker thread runs
        self._infinite = False
        self._stop_requested = threading.Event()
        # Set once the search thread has written its bestmove: the GUI may send the next go
        # before that thread has returned, and must not be told "already searching".
        self._answered = threading.Event()
        self._write_lock = threading.Lock()

    # -- output ------------------------------------------------------------
    def send(self, line: str) -> None:
        with self._write_lock:
            self.out.write(line + "\n")
            self.out.flush()

    def info_string(self, text: str) -> None:
        self.send("info string " + " ".join(text.split()))

    # -- main loop ---------------------------------------------------------
    def loop(self, lines: TextIO | None = None) -> int:
        for line in (lines or sys.stdin):
            if not self.handle(line):
                break
        self._finish_search()
        return 0

    def handle(self, line: str) -> bool:
        """Process one command line; False after ``quit``."""
        tokens = line.strip().split()
        if not tokens:
            return True
        command, args = tokens[0], tokens[1:]
        try:
            handler = getattr(self, f"_cmd_{command}", None)
            if handler is None:
                self.info_string(f"unknown command: {command}")
                return True
            return handler(args) is not False
        except Exception as exc:  # the engine must survive any input
            self.info_string(f"error in {command}: {exc}")
            return True

    # -- commands ----------------------------------------------------------
    def _cmd_uci(self, args) -> None:
        label = f" ({self.model_label})" if self.model_label else ""
        self.send(f"id name {ENGINE_NAME} {self.options.algorithm}{label}")
        self.send("id author Sightline team")
        o = Options()
        self.send(f"option name Algorithm type combo default {self.options.algorithm} "
                  + " ".join(f"var {n}" for n in search_names()))
        self.send(f"option name Nodes type spin default {o.nodes} min 0 max 1000000000")
        for option in uci_options():
            self.send(option.declaration())
        self.send(f"option name Device type string default {o.device}")
        self.send(f"option name MoveOverhead type spin default {o.move_overhead_ms} min 0 max 5000")
        self.send(f"option name MultiPV type spin default {o.multipv} min 1 max 256")
        self.send(f"option name UCI_ShowWDL type check default {'true' if o.show_wdl else 'false'}")
        self.send("uciok")

    def _cmd_isready(self, args) -> None:
        self.send("readyok")

    def _cmd_debug(self, args) -> None:
        pass

    def _cmd_register(self, args) -> None:
        pass

    def _cmd_ucinewgame(self, args) -> None:
        self._finish_search()
        if self._search is not None:
            self._search.reset()
        self.board = chess.Board()

    def _cmd_quit(self, args) -> bool:
        self._finish_search()
        return False

    def _cmd_stop(self, args) -> None:
        self._finish_search()

    def _cmd_ponderhit(self, args) -> None:
        self.info_string("pondering is not supported; ponderhit ignored")

    def _cmd_setoption(self, args) -> None:
        if not args or args[0] != "name":
            self.info_string("setoption needs: setoption name <name> [value <value>]")
            return
        if "value" in args:
            at = args.index("value")
            name, value = " ".join(args[1:at]), " ".join(args[at + 1:])
        else:
            name, value = " ".join(args[1:]), ""
        if self.searching:
            self.info_string("cannot change options while searching")
            return
        search_option = {option.name.lower(): option for option in uci_options()}.get(name.lower())
        try:
            if search_option is not None:
                self._set_search_option(search_option, value)
            elif not self._set_engine_option(name, value):
                return
        except ValueError as exc:
            self.info_string(f"option {name}: {exc}")
            return
        self._search = None  # settings changed: the next go builds a fresh search

    def _set_engine_option(self, name: str, value: str) -> bool:
        """Set one of the engine's own options; False when the search may be kept (an
        unknown option, or one that only changes what is printed)."""
        key, o = name.lower(), self.options
        if key == "algorithm":
            o.algorithm = search_spec(value).name
        elif key == "nodes":
            o.nodes = _int_in(value, 0, 1_000_000_000)
        elif key == "moveoverhead":
            o.move_overhead_ms = _int_in(value, 0, 5000)
        elif key == "multipv":
            o.multipv = _int_in(value, 1, 256)
            return False  # only changes what is printed: keep the search and its tree
        elif key == "uci_showwdl":
            if value.lower() not in ("true", "false"):
                raise ValueError("UCI_ShowWDL takes true or false")
            o.show_wdl = value.lower() == "true"
        elif key == "device":
            evaluator = self._load(None if value in ("", "auto") else value)
            self.evaluator, o.device = evaluator, value or "auto"
        else:
            self.info_string(f"unknown option {name!r}")
            return False
        return True

    def _set_search_option(self, option: UCIOption, value: str) -> None:
        """Check ``value`` against the option's range and every search that takes it (their
        settings dataclasses validate it), then keep it."""
        key = option.name.lower()
        parsed: int | float = _int_in(value, option.min, option.max) if option.kind == "spin" else float(value)
        for name in search_names():
            for own in search_spec(name).uci_options:
                if own.name.lower() == key:
                    make_settings(name, {own.setting: parsed})
        self.options.search_values[key] = parsed

    def _cmd_position(self, args) -> None:
        if not args:
            self.info_string("position needs startpos or fen")
            return
        if args[0] == "startpos":
            board, rest = chess.Board(), args[1:]
        elif args[0] == "fen":
            at = args.index("moves") if "moves" in args else len(args)
            fen = " ".join(args[1:at])
            try:
                board = board_from_fen(fen)
            except ValueError as exc:
                self.info_string(str(exc))
                return
            rest = args[at:]
        else:
            self.info_string(f"position needs startpos or fen, got {args[0]!r}")
            return
        if rest:
            if rest[0] != "moves":
                self.info_string(f"expected 'moves', got {rest[0]!r}")
                return
            try:
                board = play_uci(board, rest[1:])
            except ValueError as exc:
                self.info_string(f"{exc}; position not changed")
                return
        self.board = board

    def _cmd_go(self, args) -> None:
        if self.searching:
            self.info_string("already searching; send stop first")
            return
        budget, infinite = self._parse_go(args)
        if budget is None:
            return
        if self._thread is not None:
            self._thread.join()  # answered already: only its return is left
            self._thread = None
        search = self._current_search()
        self._infinite = infinite
        self._stop_requested.clear()
        self._answered.clear()
        board = self.board.copy()
        self._thread_search = search
        self._thread = threading.Thread(target=self._search_thread, args=(search, board, budget),
                                        name="uci-search", daemon=True)
        self._thread.start()

    # -- helpers ---------------------------------------------------------------
    @property
    def searching(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and not self._answered.is_set()

    def _parse_go(self, args) -> tuple[Budget | None, bool]:
        """The budget a ``go`` asks for and whether it is infinite; (None, False) after a
        message when the command cannot be obeyed."""
        parsed = self._go_tokens(args)
        if parsed is None:
            return None, False
        values, infinite = parsed
        if infinite:
            return Budget(), True
        try:
            budget = self._go_budget(values)
        except ValueError as exc:
            self.info_string(f"go: {exc}")
            return None, False
        return budget, budget.unlimited

    def _go_tokens(self, args) -> tuple[dict[str, int], bool] | None:
        """``go``'s numbers by name and whether ``infinite`` was given; None after a message."""
        values: dict[str, int] = {}
        infinite = False
        i = 0
        while i < len(args):
            token = args[i]
            if token in GO_NUMBERS:
                if i + 1 >= len(args):
                    self.info_string(f"go {token} needs a value")
                    return None
                try:
                    values[token] = int(args[i + 1])
                except ValueError:
                    self.info_string(f"go {token}: {args[i + 1]!r} is not an integer")
                    return None
                if values[token] <= 0 and token in GO_POSITIVE:
                    self.info_string(f"go {token} must be positive, got {values[token]}")
                    return None
                i += 2
            elif token in ("infinite", "ponder"):
                infinite = infinite or token == "infinite"
                i += 1
            elif token == "searchmoves":
                self.info_string("searchmoves is not supported; searching all moves")
                i += 1
                while i < len(args) and args[i] not in GO_NUMBERS + ("infinite", "ponder"):
                    i += 1
            else:
                self.info_string(f"go: unknown token {token!r} ignored")
                i += 1
        return values, infinite

    def _go_budget(self, values: dict[str, int]) -> Budget:
        """The limits of a finite ``go``: its move time (or a share of the clock), depth, nodes."""
        overhead = self.options.move_overhead_ms
        movetime = None
        if "movetime" in values:
            movetime = max(1, values["movetime"] - overhead)
        else:
            clock = "wtime" if self.board.turn == chess.WHITE else "btime"
            inc = "winc" if self.board.turn == chess.WHITE else "binc"
            if clock in values:
                movetime = allocate_time_ms(max(0, values[clock]), max(0, values.get(inc, 0)),
                                            values.get("movestogo"), overhead)
        depth = values.get("depth")
        if "mate" in values and depth is None:
            depth = max(1, 2 * values["mate"] - 1)
        nodes = values.get("nodes") or (self.options.nodes or None)
        return Budget(nodes=nodes if nodes and nodes > 0 else None,
                      movetime_ms=movetime if movetime and movetime > 0 else None,
                      depth=depth if depth and depth > 0 else None)

    def _current_search(self) -> Search:
        if self._search is None or self._search.name != self.options.algorithm:
            name = self.options.algorithm
            self._search = make_search(name, self.evaluator, make_settings(name, self.options.settings_for(name)))
        return self._search

    def _search_thread(self, search: Search, board: chess.Board, budget: Budget) -> None:
        show_wdl, lines = self.options.show_wdl, self.options.multipv

        def report(r: SearchResult) -> None:
            for line in format_multipv(r, show_wdl, lines):
                self.send(line)

        result: SearchResult | None = None
        try:
            result = search.run(board, budget, progress=lambda r: None if r.final else report(r))
        except Exception as exc:  # report, then still answer with a legal move
            self.info_string(f"search failed: {exc}")
        if result is not None:
            report(result)
        if self._infinite:
            self._stop_requested.wait()  # UCI: no bestmove before stop during go infinite
        self._answered.set()  # before the line: once the GUI reads it, it may send the next go
        self.send(_bestmove_line(board, result))

    def _finish_search(self) -> None:
        thread = self._thread
        if thread is None:
            return
        self._stop_requested.set()
        search = self._thread_search
        # Keep asking until the thread ends: a stop sent before the thread has entered
        # Search.run would otherwise be cleared by run's start and never seen.
        while thread.is_alive():
            if search is not None:
                search.stop(timeout=STOP_POLL_S)
            thread.join(STOP_POLL_S)
        self._thread = None


def _bestmove_line(board: chess.Board, result: SearchResult | None) -> str:
    move = result.best_move if result is not None else None
    if move is None or not board.is_legal(move):
        move = next(iter(board.legal_moves), None)
    if move is None:
        return "bestmove 0000"
    line = f"bestmove {move.uci()}"
    if result is not None and len(result.pv) >= 2 and result.pv[0] == move:
        board.push(move)
        if board.is_legal(result.pv[1]):
            line += f" ponder {result.pv[1].uci()}"
        board.pop()
    return line


def _int_in(text: str, lo: int, hi: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not an integer") from None
    if not lo <= value <= hi:
        raise ValueError(f"{value} is outside [{lo}, {hi}]")
    return value
