"""Quiescence search from the root: a position's value once its captures have been played out.

A network that was trained and used at the quiet leaves of a search (Giraffe, Lai 2015,
sections 2.1.1 and 4.5: TD-Leaf learns from the leaves of the principal variation, which
quiescence search makes quiet) swings by a piece's worth in the middle of an exchange,
where its static value is never read by its own search. This is the value that search would
give the position at depth zero: the network stands pat or plays captures and queen promotions
(every evasion when in check) until the position is quiet, with alpha-beta over them.

It is the same quiescence as the alpha-beta and probability searches (``AlphaBetaCore``),
with the same value cache, so a job's positions share the leaves they have in common.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import chess

from analysis.search.alphabeta import INF, AlphaBetaCore, AlphaBetaSettings, is_mate_value
from analysis.search.base import Budget, SearchControl, SearchResult, StopSearch, value_to_score

# Quiescence nodes per position before the search gives up and the static value stands:
# a bound for the rare position whose captures keep branching, far above a usual exchange's.
NODE_LIMIT = 20_000


@dataclass(frozen=True)
class QuiescentValue:
    """``score``: the expected score for the side to move after quiescence (``static_score``
    where it was cut off); ``static_score``: the network's value of the position itself;
    ``nodes``: quiescence nodes visited; ``complete``: False when ``NODE_LIMIT`` cut it off."""

    score: float
    static_score: float
    nodes: int
    complete: bool = True


class Quiescence(AlphaBetaCore):
    """``value(board)``: the root's quiescence value (``run`` gives it as a move-less result)."""

    name = "quiescence"
    settings_type = AlphaBetaSettings
    default_budget = Budget(nodes=NODE_LIMIT)

    def value(self, board: chess.Board, node_limit: int = NODE_LIMIT) -> QuiescentValue:
        result = self.run(board, Budget(nodes=node_limit))
        return QuiescentValue(result.score, result.extras["static_score"], result.nodes,
                              result.extras["complete"])

    # No iterations and no main-search boundary: the root is already at the horizon.
    def _iterations(self, budget: Budget) -> Iterator[tuple[int, float]]:
        yield from ()

    def _is_horizon(self, r: float) -> bool:
        return True

    def _child_budgets(self, board, moves, r, policy, hash_move=None) -> list[float]:
        return [0.0] * len(moves)

    def _run(self, board: chess.Board, control: SearchControl) -> SearchResult:
        self._reset_run()
        self._control = control
        self._node_limit = control.budget.nodes
        self._protected = False
        static = value_to_score(self._static_value(board))
        try:
            value, complete = self._quiesce(board, -INF, INF, 0, 0), True
            score = (1.0 if value > 0 else 0.0) if is_mate_value(value) else value_to_score(value)
        except StopSearch:
            score, complete = static, False
        return SearchResult(self.name, None, [], score, None, self._nodes, control.elapsed(),
                            extras={"static_score": static, "complete": complete})

    def _snapshot(self) -> SearchResult | None:
        return None
