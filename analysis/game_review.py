"""lichess's game review from engine values: win %, move marks, accuracy and average centipawn loss.

Follows lichess's own code (lila, modules/analyse and modules/common): ``WinPercent.scala`` (win %
from centipawns ceiled at +-1000, multiplier -0.00368208), ``Advice.scala`` (marks from the drop in
winning chances, 0.1 / 0.2 / 0.3 on lichess's [-1, 1] scale, which is 5 / 10 / 15 points of win %;
mates by their own rules), ``AccuracyPercent.scala`` (move accuracy 103.1668 exp(-0.04354 loss)
- 3.1669, plus lichess's one-point bonus; game accuracy the mean of a volatility-weighted mean and
a harmonic mean), ``AccuracyCP.scala`` (average centipawn loss) and ``Maths.scala`` (population
standard deviation; the harmonic mean takes each accuracy as at least 1).

Where lichess has no rule this module decides: a move that the engine itself named best is not
marked (its value moved only because the engine looked again), and a checkmated side to move
counts as mated (mate 0; the mover's win % is lichess's ceiling).

An ``Eval`` is for the side to move of its position; "mover" below is the side that made the move.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

CP_CEILING = 1000  # lila's Eval.Cp.CEILING
MULTIPLIER = -0.00368208  # lila's WinPercent (lichess-org/lila pull 11148)
# (winning-chance drop, glyph, lichess's word), largest first: Advice.winningChanceJudgements.
MARKS = ((0.3, "??", "blunder"), (0.2, "?", "mistake"), (0.1, "?!", "inaccuracy"))
PLURALS = {"inaccuracy": "inaccuracies", "mistake": "mistakes", "blunder": "blunders"}
MATE_CREATED, MATE_LOST = "Checkmate is now unavoidable", "Lost forced checkmate sequence"


def win_percent(cp: float) -> float:
    """lichess's win % for the side with ``cp`` centipawns (not ceiled: ``Eval.win_percent`` ceils)."""
    return 50 + 50 * (2 / (1 + math.exp(MULTIPLIER * cp)) - 1)


@dataclass(frozen=True)
class Eval:
    """An engine value for the side to move: centipawns, or a mate distance (+ mating, - mated, 0 mated)."""

    cp: int | None
    mate: int | None

    def flipped(self) -> "Eval":
        """The same value for the other side (a mated side to move, mate 0, becomes mating: +0 as 1 ply)."""
        if self.mate is not None:
            return Eval(None, 1 if self.mate == 0 else -self.mate)
        return Eval(None if self.cp is None else -self.cp, None)

    @property
    def mating(self) -> bool:
        return self.mate is not None and self.mate > 0

    @property
    def mated(self) -> bool:
        return self.mate is not None and self.mate <= 0

    def ceiled_cp(self) -> int:
        """lila's ``forceAsCp`` then ``ceiled``: centipawns within +-1000, a mate at the ceiling."""
        if self.mate is not None:
            return CP_CEILING if self.mating else -CP_CEILING
        return max(-CP_CEILING, min(CP_CEILING, self.cp))

    def win_percent(self) -> float:
        return win_percent(self.ceiled_cp())


def move_evals(before: Eval, after: Eval) -> tuple[Eval, Eval]:
    """The mover's view of the positions before and after a move (``after`` is the opponent's to move)."""
    return before, after.flipped()


@dataclass(frozen=True)
class Mark:
    glyph: str
    name: str
    reason: str = ""  # lichess's sentence for a mark made by the mate rules


def mark(before: Eval, after: Eval, played_is_best: bool = False) -> Mark | None:
    """lichess's mark (``Advice``) of a move from the engine's values before and after it."""
    if played_is_best:
        return None
    mover_before, mover_after = move_evals(before, after)
    if mover_before.cp is not None and mover_after.cp is not None:
        chance = lambda e: (e.win_percent() - 50) / 50  # noqa: E731 (lichess's winningChances)
        drop = chance(mover_before) - chance(mover_after)
        for limit, glyph, name in MARKS:
            if drop >= limit:
                return Mark(glyph, name)
        return None
    return _mate_mark(mover_before, mover_after)


def _mate_mark(before: Eval, after: Eval) -> Mark | None:
    """``MateAdvice``: a mate the mover now walks into, or one the mover let slip."""
    if before.mate is None and after.mate is not None and after.mate < 0:
        cp = before.cp or 0
        return _by_size(-cp, MATE_CREATED)
    if before.mating and (after.mate is None or after.mate < 0):
        cp = after.cp if after.mate is None else 0
        return _by_size(cp or 0, MATE_LOST)
    return None


def _by_size(cp_kept: int, reason: str) -> Mark:
    """Mate rules' size: what the mover still had (a mate walked into from -10 pawns is small)."""
    if cp_kept > 999:
        return Mark("?!", "inaccuracy", reason)
    if cp_kept > 700:
        return Mark("?", "mistake", reason)
    return Mark("??", "blunder", reason)


def move_accuracy(win_before: float, win_after: float) -> float:
    """``AccuracyPercent.fromWinPercents``: the mover's win % before and after, in [0, 100]."""
    if win_after >= win_before:
        return 100.0
    raw = 103.1668100711649 * math.exp(-0.04354415386753951 * (win_before - win_after)) - 3.166924740191411
    return max(0.0, min(100.0, raw + 1))


def _stdev(values: Sequence[float]) -> float:
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def _harmonic(values: Sequence[float]) -> float:
    return len(values) / sum(1 / max(1.0, v) for v in values)


def game_accuracy(white_wins: Sequence[float], white_starts: bool = True) -> dict[str, float | None]:
    """``AccuracyPercent.gameAccuracy``: {"white": %, "black": %} from White's win % at every position of
    the line, the first position included (lila puts its initial +15 cp there; we have its engine value).
    """
    moves = len(white_wins) - 1
    if moves < 1:
        return {"white": None, "black": None}
    size = max(2, min(8, moves // 10))
    windows = [list(white_wins[:size])] * (min(size, len(white_wins)) - 2)
    windows += [list(white_wins[i:i + size]) for i in range(max(1, len(white_wins) - size + 1))]
    weights = [max(0.5, min(12.0, _stdev(w))) for w in windows]
    by_colour: dict[str, list[tuple[float, float]]] = {"white": [], "black": []}
    for i, weight in zip(range(moves), weights):
        white = (i % 2 == 0) == white_starts
        prev, nxt = white_wins[i], white_wins[i + 1]
        accuracy = move_accuracy(prev, nxt) if white else move_accuracy(100 - prev, 100 - nxt)
        by_colour["white" if white else "black"].append((accuracy, weight))
    out: dict[str, float | None] = {}
    for colour, pairs in by_colour.items():
        if not pairs:
            out[colour] = None
            continue
        weighted = sum(a * w for a, w in pairs) / sum(w for _, w in pairs)
        out[colour] = (weighted + _harmonic([a for a, _ in pairs])) / 2
    return out


def centipawn_losses(white_cps: Sequence[int], white_starts: bool = True) -> dict[str, list[int]]:
    """``AccuracyCP.diffsList``: each move's loss in ceiled centipawns (at least 0), by colour."""
    out: dict[str, list[int]] = {"white": [], "black": []}
    for i in range(len(white_cps) - 1):
        white = (i % 2 == 0) == white_starts
        change = white_cps[i + 1] - white_cps[i]
        out["white" if white else "black"].append(max(0, -change if white else change))
    return out


def review(evals: Sequence[Eval], marks: Sequence[Mark | None], white_starts: bool = True) -> dict:
    """Per player: accuracy %, average centipawn loss and counts of marks, for one line of positions.

    ``evals``: the engine's value of each position of the line (side to move's), the first included;
    ``marks``: the mark of each move (``len(evals) - 1`` of them).
    """
    white_views = [e if (i % 2 == 0) == white_starts else e.flipped() for i, e in enumerate(evals)]
    accuracy = game_accuracy([e.win_percent() for e in white_views], white_starts)
    losses = centipawn_losses([e.ceiled_cp() for e in white_views], white_starts)
    out = {}
    for colour in ("white", "black"):
        own = [m for i, m in enumerate(marks) if ((i % 2 == 0) == white_starts) == (colour == "white")]
        out[colour] = {
            "accuracy": None if accuracy[colour] is None else round(accuracy[colour], 1),
            "acpl": math.floor(sum(losses[colour]) / len(losses[colour]) + 0.5) if losses[colour] else None,
            "moves": len(own),
            **{plural: sum(1 for m in own if m and m.name == name) for name, plural in PLURALS.items()},
        }
    return out
