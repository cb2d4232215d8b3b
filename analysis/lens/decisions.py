"""The decision timeline's figures, kept with each position's evaluation and sent with each ply.

Per position (``position_timeline``), what does not depend on the game: every legal move's rank
at every readout point of the logit lens. Per ply (``for_ply``), for the move played there:

- ``final_from``: the first readout point from which the network's final move (its top move at
  the last point, its own output) stays the top move to the end;
- ``played_from``: the same for the move played in the game (None when the network's final move
  is another one), with the played move's rank at every point (``played_ranks``).

Readout points are counted from 0 in forward order (``readouts`` names them). No torch here.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def settles(ranks: Sequence[int]) -> int | None:
    """The first index from which ``ranks`` stays 1 to the end (None when the last is not 1)."""
    if not len(ranks) or ranks[-1] != 1:
        return None
    first = len(ranks) - 1
    while first > 0 and ranks[first - 1] == 1:
        first -= 1
    return first


def position_timeline(readouts: Sequence[str], moves: Sequence[str], ranks: np.ndarray) -> dict:
    """What is stored with a position's evaluation: the readout names, every legal move's rank per
    point ({uci: [rank per readout]}), the final move (rank 1 at the last point; the first such
    move on a tie) and where it settles. ``ranks``: (R, M), 1 = the top move at that point."""
    final = int(np.flatnonzero(ranks[-1] == 1)[0])
    return {"readouts": list(readouts), "final": moves[final],
            "final_from": settles(ranks[:, final].tolist()),
            "ranks": {uci: ranks[:, i].tolist() for i, uci in enumerate(moves)}}


def for_ply(stored: dict, played: str | None) -> dict:
    """A position's stored timeline for the page: readouts, final move and ``final_from``, and the
    move ``played`` from it in the game (None when unknown) with ``played_from`` and its ranks.
    A stored ``{"why": ...}`` (no timeline for this network) passes through."""
    if "why" in stored:
        return {"why": stored["why"]}
    ranks = stored["ranks"].get(played) if played else None
    return {"readouts": stored["readouts"], "final": stored["final"], "final_from": stored["final_from"],
            "played": played if ranks is not None else None,
            "played_from": None if ranks is None else settles(ranks),
            "played_ranks": ranks}
