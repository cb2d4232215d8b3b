"""The look-ahead puzzle set, built as Jenner et al. (NeurIPS 2024) build theirs, on Sightline's nets.

From a Lichess puzzle (``Item``: the position after the setup move, ``moves`` its solution line):

1. *structural*: not a mate in 1 (the ``mateIn1`` theme, or a first move that mates); a line of at
   least ``min_plies`` (3) plies, so there is a 3rd move (player, opponent, player); the 1st move's
   target square is not the 3rd move's (the paper's analysis skips those). Passing these makes a
   puzzle *eligible*.
2. *correct*: the studied network's top move is every player move of the line (Sightline's puzzle
   rule: top-1, a mate counts however it is played), each position read from its FEN alone. The
   paper asks p > 0.5 on every player move instead; top-1 is the rule every Sightline puzzle score uses.
3. *hard*: the sparring network puts less than ``hard`` (0.05) on the 1st move.
4. *forcing*: the sparring network puts more than ``forcing`` (0.7) on the opponent's reply, as the paper.
5. *corrupted*: of the boards one edit away (``analysis.studies.corruptions``), those where the
   sparring net's log-odds of the 1st move fall by less than 0.2, the studied net's value for the mover
   (W - L) falls by more than 0.1 and its probability of its old top move is under 0.1; the one with the
   smallest Jensen-Shannon divergence (nats) between the sparring net's clean and corrupted policies
   (over the union of both positions' legal moves) is kept; none, or a JSD above 0.2: dropped.

Every position is built from its FEN alone, clean and corrupted alike (no move history: an Lc0 or Maia
input then differs between the two only where the boards do). All candidates of a puzzle are
evaluated in one batched call per network (the sparring net reads only those that pass the
studied net's two rules). A dropped puzzle records its reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import chess
import numpy as np
from scipy.spatial.distance import jensenshannon

from analysis.studies.corruptions import corruptions
from analysis.studies.positions import Item

REASONS = ("mate in 1", "short line", "1st target reused as 3rd", "not correct", "not hard", "not forcing",
           "no corruption", "corruption too disruptive")


@dataclass(frozen=True)
class PuzzleRules:
    """The set's thresholds (the paper's defaults)."""

    min_plies: int = 3
    hard: float = 0.05
    forcing: float = 0.7
    sparring_log_odds_drop: float = 0.2
    value_drop: float = 0.1
    old_top_prob: float = 0.1
    max_jsd: float = 0.2


def log_odds(p: float) -> float:
    p = min(max(p, 1e-12), 1 - 1e-12)
    return math.log(p) - math.log1p(-p)


def from_fen(fen: str) -> chess.Board:
    return chess.Board(fen)


def structural(item: Item) -> str | None:
    """None when the puzzle is eligible, else the reason (one of REASONS)."""
    board = item.board()
    themes = item.meta.get("themes") or []
    if "mateIn1" in themes:
        return "mate in 1"
    if item.moves:
        after = board.copy(stack=False)
        after.push_uci(item.moves[0])
        if after.is_checkmate():
            return "mate in 1"
    if len(item.moves) < 3:
        return "short line"
    if chess.Move.from_uci(item.moves[0]).to_square == chess.Move.from_uci(item.moves[2]).to_square:
        return "1st target reused as 3rd"
    return None


def line_boards(item: Item) -> list[chess.Board]:
    """The position before each move of the line, each from its FEN alone."""
    board, boards = item.board(), []
    for uci in item.moves:
        boards.append(from_fen(board.fen()))
        board.push_uci(uci)
    return boards


def correct(evaluator, item: Item) -> bool:
    """The studied net's top move is each player move (a mating top move counts): one batched call."""
    boards = line_boards(item)[0::2]
    for board, expected, ev in zip(boards, item.moves[0::2], evaluator.evaluate(boards)):
        top = ev.best_move()
        if top is None:
            return False
        if top.uci() != expected:
            after = board.copy(stack=False)
            after.push(top)
            return after.is_checkmate()
    return True


def mover_value(ev) -> float:
    """W - L for the side to move (2 x expected score - 1: the same where there is no WDL)."""
    return 2.0 * ev.score - 1.0


def jsd(p: dict, q: dict) -> float:
    """Jensen-Shannon divergence (nats) of two move distributions, over the union of their moves."""
    moves = sorted(set(p) | set(q), key=lambda m: m.uci())
    a = np.array([p.get(m, 0.0) for m in moves], dtype=float)
    b = np.array([q.get(m, 0.0) for m in moves], dtype=float)
    return float(jensenshannon(a, b) ** 2)


def build(item: Item, studied, sparring, rules: PuzzleRules = PuzzleRules()) -> dict:
    """{"kept": True, "fen", "corrupted_fen", "first", "third", "corrupted_squares", "edit", ...} or
    {"kept": False, "reason": ...}. ``studied``/``sparring``: evaluators (``evaluate(boards)``)."""
    reason = structural(item)
    if reason:
        return {"kept": False, "eligible": False, "reason": reason}
    if not correct(studied, item):
        return {"kept": False, "eligible": True, "reason": "not correct"}
    first, reply = chess.Move.from_uci(item.moves[0]), chess.Move.from_uci(item.moves[1])
    clean, after = line_boards(item)[:2]
    spar_clean, spar_after = sparring.evaluate([clean, after])
    p_first = spar_clean.policy.get(first, 0.0)
    if p_first >= rules.hard:
        return {"kept": False, "eligible": True, "reason": "not hard", "sparring_first": round(p_first, 5)}
    p_reply = spar_after.policy.get(reply, 0.0)
    if p_reply <= rules.forcing:
        return {"kept": False, "eligible": True, "reason": "not forcing", "sparring_reply": round(p_reply, 5)}
    chosen = choose_corruption(clean, first, studied, sparring, spar_clean, rules)
    if "reason" in chosen:
        return {"kept": False, "eligible": True, **chosen}
    return {"kept": True, "eligible": True, "fen": clean.fen(), "first": item.moves[0], "third": item.moves[2],
            "sparring_first": round(p_first, 5), "sparring_reply": round(p_reply, 5), **chosen}


def choose_corruption(clean: chess.Board, first: chess.Move, studied, sparring, spar_clean, rules: PuzzleRules) -> dict:
    """The least disruptive corruption that passes the rules, or {"reason": ...}."""
    candidates = corruptions(clean, first)
    if not candidates:
        return {"reason": "no corruption", "candidates": 0}
    boards = [from_fen(c.fen) for c in candidates]
    stud_clean, *stud = studied.evaluate([clean, *boards])
    old_top, base_value = stud_clean.best_move(), mover_value(stud_clean)
    # The studied net's rules first: the sparring net then reads only the boards that pass them.
    passing = [i for i, ev in enumerate(stud) if base_value - mover_value(ev) > rules.value_drop
               and ev.policy.get(old_top, 0.0) < rules.old_top_prob]
    spar = sparring.evaluate([boards[i] for i in passing])
    base_odds = log_odds(spar_clean.policy.get(first, 0.0))
    best = None
    for i, s_ev in zip(passing, spar):
        if base_odds - log_odds(s_ev.policy.get(first, 0.0)) >= rules.sparring_log_odds_drop:
            continue
        divergence = jsd(spar_clean.policy, s_ev.policy)
        if best is None or divergence < best[0]:
            best = (divergence, candidates[i])
    if best is None:
        return {"reason": "no corruption", "candidates": len(candidates)}
    divergence, c = best
    if divergence > rules.max_jsd:
        return {"reason": "corruption too disruptive", "candidates": len(candidates), "jsd": round(divergence, 6)}
    return {"corrupted_fen": c.fen, "edit": c.edit, "corrupted_squares": list(c.squares),
            "jsd": round(divergence, 6), "candidates": len(candidates)}
