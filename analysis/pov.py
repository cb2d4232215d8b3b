"""Point of view: one conversion from the side to move's values to White's.

Evaluators and searches value a position for the side to move (an expected score in [0, 1],
a WDL triple, a mate distance that is positive when the mover mates), and results are stored
that way. People read a game from White's side: the site converts, once, where it serialises
for the page (``webapp.jobs.live.messages``), with the functions here.
"""

from __future__ import annotations

from typing import Sequence


def white_to_move(fen: str) -> bool:
    """Whose turn it is, from a FEN's second field."""
    return fen.split()[1] == "w"


def score_for_white(score: float | None, white_to_move: bool) -> float | None:
    """An expected score for the side to move, as White's (None stays None).

    Not rounded again: 1 - score is the same number wherever it is taken (the page took it
    itself before), so the digits shown do not move.
    """
    if score is None or white_to_move:
        return score
    return 1.0 - score


def wdl_for_white(wdl: Sequence[float] | None, white_to_move: bool) -> list[float] | None:
    """The mover's [win, draw, loss] as [White wins, draw, White loses]."""
    if wdl is None:
        return None
    return list(wdl) if white_to_move else list(wdl)[::-1]


def mate_for_white(mate: int | None, white_to_move: bool) -> int | None:
    """A mate distance in moves, positive when the mover mates, as positive when White mates."""
    if mate is None or white_to_move:
        return mate
    return -mate


def bound_for_white(bound: str, white_to_move: bool) -> str:
    """An "upper"/"lower" bound on the mover's score, as one on White's ("exact" stays)."""
    if white_to_move:
        return bound
    return {"upper": "lower", "lower": "upper"}.get(bound, bound)
