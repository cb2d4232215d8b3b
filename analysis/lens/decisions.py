"""The decision timeline's figures, kept with each position's evaluation and sent with each ply.

Per position (``position_timeline``), what does not depend on the game: every legal move's rank
at the readout points of the logit lens the timeline read. Per ply (``for_ply``), for the move played there:

- ``final_from``: the first readout point from which the network's final move (its top move at
  the last point, its own output) stays the top move to the end;
- ``played_from``: the same for the move played in the game (None when the network's final move
  is another one), with the played move's rank at every point read (``played_ranks``).

The points are read backwards from the network's own output and only as far as ``final_from``
needs (one point before it), so ranks are None at the earlier points; the last point, the
network's own output, is always read. The logit lens gives every point on demand.

Readout points are counted from 0 in forward order (``readouts`` names them). No torch here.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def settles(ranks: Sequence[int | None]) -> int | None:
    """The first index from which ``ranks`` stays 1 to the end (None when the last is not 1)."""
    if not len(ranks) or ranks[-1] != 1:
        return None
    first = len(ranks) - 1
    while first > 0 and ranks[first - 1] == 1:
        first -= 1
    return first


def position_timeline(readouts: Sequence[str], moves: Sequence[str], ranks: Sequence[np.ndarray | None]) -> dict:
    """What is stored with a position's evaluation: the readout names, the final move (rank 1 at
    the last point; the first such move on a tie), where it settles, the legal ``moves`` and their
    ranks at the points read: ``ranks_from`` (the first point read) and ``ranks``, one flat list,
    point after point, of every move's rank (one list, not one per move: fewer objects for the
    worker's garbage collector). ``ranks``: per readout point, (M,) ranks (1 = the top move there)
    or None where it was not read: only points before one where the final move is not top, which
    cannot change where it settles."""
    final = int(np.flatnonzero(ranks[-1] == 1)[0])
    read_from = next((r + 1 for r in range(len(ranks) - 1, -1, -1) if ranks[r] is None), 0)
    if any(r is not None for r in ranks[:read_from]):
        raise ValueError("the points read must run from some point to the last")
    table = np.stack(ranks[read_from:])  # (points read, moves)
    return {"readouts": readouts, "final": moves[final],
            "final_from": settles([None] * read_from + table[:, final].tolist()),
            "moves": list(moves), "ranks_from": read_from, "ranks": table.ravel().tolist()}


def move_ranks(stored: dict, uci: str) -> list[int | None] | None:
    """A stored timeline's ranks of move ``uci`` per readout point (None where not read), or None
    when ``uci`` is not one of its legal moves."""
    if "moves" not in stored:  # stored before the compact form: {uci: rank at every point}
        return stored["ranks"].get(uci)
    if uci not in stored["moves"]:
        return None
    moves, read_from = len(stored["moves"]), stored["ranks_from"]
    return [None] * read_from + stored["ranks"][stored["moves"].index(uci)::moves]


def for_ply(stored: dict, played: str | None) -> dict:
    """A position's stored timeline for the page: readouts, final move and ``final_from``, and the
    move ``played`` from it in the game (None when unknown) with ``played_from`` and its ranks
    (None at the points the timeline did not read). A stored ``{"why": ...}`` passes through."""
    if "why" in stored:
        return {"why": stored["why"]}
    ranks = move_ranks(stored, played) if played else None
    return {"readouts": stored["readouts"], "final": stored["final"], "final_from": stored["final_from"],
            "played": played if ranks is not None else None,
            "played_from": None if ranks is None else settles(ranks),
            "played_ranks": ranks}
