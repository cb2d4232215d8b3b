"""``search`` and ``uci``: run one search from the command line, or serve a UCI engine.

``--model`` takes a checkpoint path, or ``material`` for the material-count
evaluator (no network; handy for tests and as a baseline).
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from analysis.cli import CommandError
from analysis.cli.model_cmds import STARTING_FEN, board_from_args
from analysis.search_catalogue import search_names

if TYPE_CHECKING:  # imported where a command runs: --help stays light
    import chess

    from analysis.evaluator import Evaluator
    from analysis.search.base import SearchResult


def register(subparsers) -> None:
    search = subparsers.add_parser("search", help="search one position and print the result")
    search.add_argument("--model", required=True, help="checkpoint path, or 'material'")
    search.add_argument("--fen", default=STARTING_FEN)
    search.add_argument("--moves", nargs="*", default=[], metavar="UCI", help="moves played from the FEN")
    search.add_argument("--algo", required=True, choices=search_names())
    limit = search.add_mutually_exclusive_group()
    limit.add_argument("--nodes", type=int, help="node budget")
    limit.add_argument("--movetime", type=int, metavar="MS", help="time budget in milliseconds")
    limit.add_argument("--depth", type=int, help="depth budget (iterations for probability search)")
    search.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a search setting, e.g. --set cpuct=2.0 (repeatable)")
    search.add_argument("--device", default=None, help="cpu or cuda (default: auto)")
    search.add_argument("--json", action="store_true", help="print one JSON object")
    search.set_defaults(handler=run_search_cmd)

    uci = subparsers.add_parser("uci", help="speak UCI on stdin/stdout (for chess GUIs)")
    uci.add_argument("--model", required=True, help="checkpoint path, or 'material'")
    uci.add_argument("--algo", default="mcts", choices=search_names())
    uci.add_argument("--device", default=None, help="cpu or cuda (default: auto)")
    uci.set_defaults(handler=run_uci)


def load_model(model: str, device: str | None) -> "Evaluator":
    """The evaluator for ``--model``, or a one-line CommandError."""
    from analysis.checkpoint import CheckpointError
    from analysis.eval.specs import resolve_evaluator

    try:
        return resolve_evaluator(model, device=device)
    except FileNotFoundError:
        raise CommandError(f"model file not found: {model}") from None
    except (CheckpointError, ValueError, OSError) as exc:
        raise CommandError(f"cannot load model {model}: {exc}") from None


def model_label(evaluator: "Evaluator") -> str:
    trained = getattr(evaluator, "trained", None)
    return f"{evaluator.name}, untrained" if trained is False else evaluator.name


def _settings(algo: str, pairs: list[str]):
    from analysis.search.registry import make_settings

    values = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CommandError(f"--set takes KEY=VALUE, got {pair!r}")
        values[key.strip()] = value.strip()
    try:
        return make_settings(algo, values)
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def run_search_cmd(args) -> int:
    from analysis.search.base import Budget
    from analysis.search.registry import make_search

    board = board_from_args(args.fen, args.moves)
    settings = _settings(args.algo, args.set)
    try:
        budget = Budget(nodes=args.nodes, movetime_ms=args.movetime, depth=args.depth)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    evaluator = load_model(args.model, args.device)
    search = make_search(args.algo, evaluator, settings)
    progress = None if args.json else ProgressLine(board, sys.stderr)
    try:
        result = search.run(board, None if budget.unlimited else budget, progress=progress)
    except ValueError as exc:  # e.g. the policy search on a model without a policy head
        raise CommandError(str(exc)) from None
    finally:
        if progress is not None:
            progress.close()
    if args.json:
        print(json.dumps(result.to_json()))
    else:
        print_result(board, result, model_label(evaluator))
    return 0


class ProgressLine:
    """Live progress on stderr: nodes, nodes/s, best move and PV. On a terminal one line is
    redrawn in place; otherwise (a log, a pipe) a line is written every ``LOG_EVERY_S``."""

    LOG_EVERY_S = 1.0
    PV_MOVES = 8

    def __init__(self, board: "chess.Board", stream):
        self.board, self.stream = board, stream
        self.live = stream.isatty()
        self.last, self.drawn = 0.0, 0

    def __call__(self, snapshot: "SearchResult") -> None:
        import time

        now = time.monotonic()
        if snapshot.final or (not self.live and now - self.last < self.LOG_EVERY_S):
            return
        self.last = now
        line = self.text(snapshot)
        if self.live:
            self.stream.write("\r" + line.ljust(self.drawn))
            self.drawn = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def text(self, snapshot: "SearchResult") -> str:
        best = self.board.san(snapshot.best_move) if snapshot.best_move else "-"
        pv = self.board.variation_san(snapshot.pv[:self.PV_MOVES]) if snapshot.pv else ""
        return (f"nodes {snapshot.nodes:,}  nps {snapshot.nps:,}  depth {snapshot.depth}  "
                f"best {best}  score {snapshot.score:.3f}  pv {pv}")

    def close(self) -> None:
        if self.live and self.drawn:  # leave the terminal on a fresh line
            self.stream.write("\n")
            self.stream.flush()


def print_result(board: "chess.Board", result: "SearchResult", label: str) -> None:
    print(f"{board.fen()}  [{result.algo} on {label}]")
    if result.best_move is None:
        print("no legal moves: " + ("checkmate" if board.is_checkmate() else "stalemate"))
        return
    score = f"mate {result.mate}" if result.mate is not None else f"{result.centipawns:+d} cp"
    wdl = ""
    if result.wdl is not None:
        wdl = "  wdl " + "/".join(f"{x:.3f}" for x in result.wdl)
    print(f"bestmove {result.best_move.uci()} ({board.san(result.best_move)})  "
          f"score {result.score:.3f} ({score}){wdl}")
    print(f"pv {board.variation_san(result.pv)}")
    print(f"nodes {result.nodes}  nps {result.nps}  depth {result.depth}  seldepth {result.seldepth}  "
          f"time {result.elapsed_s * 1000:.0f} ms")
    print(f"{'move':8} {'visits':>7} {'q':>7} {'prior':>7} {'score':>7}")
    for r in result.top_root(10):
        cells = [f"{v:>7}" if isinstance(v, int) else (f"{v:7.3f}" if v is not None else f"{'-':>7}")
                 for v in (r.visits, r.q, r.prior, r.score)]
        print(f"{board.san(r.move):8} " + " ".join(cells))


def run_uci(args) -> int:
    from analysis.search.uci import UCIEngine
    from analysis.eval.specs import parse_spec

    first = load_model(args.model, args.device)
    loaded = {"first": True}

    def load(device: str | None) -> "Evaluator":
        if loaded.pop("first", False):
            return first
        if parse_spec(args.model).builtin:
            return first
        try:
            return load_model(args.model, device)
        except CommandError as exc:
            raise ValueError(str(exc)) from None

    engine = UCIEngine(load, algorithm=args.algo, model_label=model_label(first))
    return engine.loop(sys.stdin)
