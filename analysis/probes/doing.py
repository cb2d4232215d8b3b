"""Knowing against doing: how well a net's best point reads a concept, beside how often its top
move acts on it, over the concept's test positions where there is something to act on:

- ``opp_en_prise``: the top move captures an en-prise opponent piece;
- ``own_en_prise``: after the top move, no piece of the mover is en prise (it saved its piece);
- ``mate_in_one``: the top move mates.

Rates carry Wilson 95% intervals (scipy). The plain reading compares the nets in the order given
(e.g. by rating): knowing is "flat" when every pair of best-AUROC intervals overlaps, doing
"rises" when the rates increase along the order and the first and last intervals do not overlap.
"""

from __future__ import annotations

from typing import Any, Sequence

import chess
import numpy as np
from scipy.stats import binomtest

from analysis.probes.concepts import en_prise_map
from analysis.probes.positions import TEST, ConceptSet, ProbeData

KNOWING = ("own_en_prise", "opp_en_prise", "mate_in_one", "mate_threat", "any_own_en_prise", "any_opp_en_prise")


def _acts(concept: str, board: chess.Board, move: chess.Move) -> bool:
    if concept == "opp_en_prise":
        return en_prise_map(board, not board.turn)[move.to_square] == 1
    if concept == "mate_in_one":
        board.push(move)
        try:
            return board.is_checkmate()
        finally:
            board.pop()
    mover = board.turn
    board.push(move)
    try:
        return not np.nansum(en_prise_map(board, mover)) > 0
    finally:
        board.pop()


def _faces(cset: ConceptSet, row: int) -> bool:
    """The position holds something to act on (a positive label, on any square)."""
    return bool(np.nansum(cset.labels[row]) > 0)


def doing_rates(evaluator, data: ProbeData) -> dict[str, dict[str, Any]]:
    """{concept: {"rate", "low", "high", "positions"}} for the doing concepts in ``data``."""
    out = {}
    for name in ("opp_en_prise", "own_en_prise", "mate_in_one"):
        cset = data.sets.get(name)
        if cset is None:
            continue
        rows = [r for r in cset.rows(TEST) if _faces(cset, r)]
        boards = [data.boards[cset.index[r]] for r in rows]
        moves = [e.best_move() for e in evaluator.evaluate(boards)] if boards else []
        hits = sum(1 for b, m in zip(boards, moves) if m is not None and _acts(name, b, m))
        out[name] = rate(hits, len(boards))
    return out


def rate(hits: int, n: int) -> dict[str, Any]:
    if n == 0:
        return {"rate": None, "low": None, "high": None, "positions": 0}
    ci = binomtest(hits, n).proportion_ci(method="wilson")
    return {"rate": round(hits / n, 4), "low": round(ci.low, 4), "high": round(ci.high, 4), "positions": n}


def knowing(result: dict[str, Any]) -> dict[str, Any]:
    """{concept: {"score", "low", "high", "point"}}: the best point's score of the knowing concepts."""
    out = {}
    for name, entry in result["concepts"].items():
        if name in KNOWING and entry["best_point"] is not None:
            best = entry["trained"][result["points"].index(entry["best_point"])]
            out[name] = {**best, "point": entry["best_point"]}
    return out


def _overlap(a, b) -> bool:
    return a["low"] <= b["high"] and b["low"] <= a["high"]


def reading(nets: Sequence[str], know: dict[str, dict], do: dict[str, dict]) -> list[str]:
    """One sentence per concept: whether knowing is flat and doing rises along ``nets``."""
    lines = []
    for concept in sorted(set(k for net in nets for k in know.get(net, {})) | set(k for net in nets for k in do.get(net, {}))):
        k = [know[n][concept] for n in nets if concept in know.get(n, {})]
        d = [do[n][concept] for n in nets if concept in do.get(n, {}) and do[n][concept]["rate"] is not None]
        parts = []
        if len(k) == len(nets):
            flat = all(_overlap(a, b) for i, a in enumerate(k) for b in k[i + 1:])
            parts.append("knowing is flat (every interval overlaps)" if flat else "knowing differs between nets")
        if len(d) == len(nets):
            rates = [x["rate"] for x in d]
            rises = all(a <= b for a, b in zip(rates, rates[1:])) and not _overlap(d[0], d[-1])
            parts.append("doing rises with the order given" if rises else
                         "doing does not rise clearly (" + ", ".join(f"{r:.2f}" for r in rates) + ")")
        if parts:
            lines.append(f"{concept}: " + "; ".join(parts))
    return lines
