"""lc0's own search beside Sightline's MCTS on one position, same network and nodes: the comparison's answer.

Per root move each search's visits, prior and Q (an expected score in [0, 1] for the side to move),
each search's move, the raw policy's top move and whether search overruled it, and the total
variation between the two visit shares. When lc0 gives no answer (the network is not one lc0 can
run; lc0 missing, crashed or hung) ``Lc0Unanswered`` says why in words and Sightline's search is not
run: the comparison is what was asked for. The site's worker stores the answer as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import chess

from analysis.engines.lc0 import total_variation
from analysis.engines.lc0_compare import Lc0Comparison, compare_with_lc0
from analysis.errors import CheckpointError
from analysis.search.base import Budget, SearchResult
from analysis.search.registry import search_class

LINES = 8  # root moves shown per search


class Lc0Unanswered(RuntimeError):
    """lc0 gave no answer; the message says why in words ("lc0 is unavailable: ...")."""


@dataclass(frozen=True)
class ComparisonLimits:
    """How long each side may take: past ``lc0_timeout_s`` to start, or as long again to search,
    lc0 is killed; Sightline's MCTS ends by ``search_limit_ms`` whatever its nodes."""

    lc0_timeout_s: float = 60.0
    search_limit_ms: int = 120_000


def compare_searches(export_net: Callable[[], Path], board: chess.Board, nodes: int, evaluator,
                     limits: ComparisonLimits = ComparisonLimits()) -> dict:
    """Both searches of ``board`` with ``nodes``, as stored (the side to move's view). ``export_net``
    writes (once) and returns the network in lc0's format; ``evaluator`` is the same network's."""
    found = _lc0_search(export_net, board, nodes, limits.lc0_timeout_s)
    ours = search_class("mcts")(evaluator).run(board, Budget(nodes=nodes, movetime_ms=limits.search_limit_ms))
    theirs_visits = {chess.Move.from_uci(line.move): line.visits for line in found.lines}
    ours_visits = {r.move: r.visits or 0 for r in ours.root}
    return {"nodes": nodes, "lc0": _lc0_json(found, board), "sightline": _sightline_json(ours, board),
            "visit_distance": round(total_variation(_share(theirs_visits), _share(ours_visits)), 4)}


def _lc0_search(export_net: Callable[[], Path], board: chess.Board, nodes: int, timeout_s: float) -> Lc0Comparison:
    try:
        net = export_net()
    except CheckpointError as exc:
        raise Lc0Unanswered(f"lc0 cannot run this network: {exc}") from None
    found = compare_with_lc0(net, board, nodes, lines=256, timeout_s=timeout_s)
    if not found.available:
        raise Lc0Unanswered(found.message)
    return found


def _share(visits: dict) -> dict:
    total = sum(visits.values())
    return {m: v / total for m, v in visits.items()} if total else {}


def _san(board: chess.Board, uci: str | None) -> str | None:
    return None if uci is None else board.san(chess.Move.from_uci(uci))


def _summary(board: chess.Board, best: str | None, policy: str | None, nodes: int, lines: list[dict]) -> dict:
    return {"best": best, "best_san": _san(board, best), "policy_move": policy, "policy_san": _san(board, policy),
            "overruled": best is not None and policy is not None and best != policy, "nodes": nodes,
            "lines": lines[:LINES]}


def _lc0_json(found: Lc0Comparison, board: chess.Board) -> dict:
    lines = [{"move": line.move, "san": _san(board, line.move), "visits": line.visits,
              "prior": round(line.prior, 5), "q": round((line.q + 1) / 2, 5) if line.visits else None}
             for line in found.lines]  # lc0's Q is in [-1, 1]; an unvisited move's is only its first-play value
    return _summary(board, found.best_move, found.policy_move, found.nodes, lines)


def _sightline_json(result: SearchResult, board: chess.Board) -> dict:
    lines = [{"move": r.move.uci(), "san": board.san(r.move), "visits": r.visits or 0,
              "prior": None if r.prior is None else round(float(r.prior), 5),
              "q": None if r.q is None or not r.visits else round(float(r.q), 5)} for r in result.top_root(LINES)]
    policy = max(result.root, key=lambda r: r.prior or 0.0).move.uci() if result.root else None
    best = result.best_move.uci() if result.best_move else None
    return _summary(board, best, policy, result.nodes, lines)
