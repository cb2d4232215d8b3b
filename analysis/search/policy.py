"""The policy agent: one evaluation, play the policy's argmax (Chessformer / ChessBench)."""

from __future__ import annotations

from dataclasses import dataclass

import chess

from analysis import search_catalogue as catalogue
from analysis.search.base import (Budget, RootMove, Search, SearchControl, SearchResult,
                                  evaluation_value, game_over_result, terminal_value, value_to_score,
                                  value_to_wdl)


@dataclass
class PolicySettings:
    """Softmax temperature handed to the evaluator (1.0: the network's own policy)."""

    temperature: float = 1.0

    def __post_init__(self):
        if not self.temperature > 0:
            raise ValueError("temperature must be positive")


class PolicySearch(Search):
    """Searchless: the move the network ranks highest. Needs a model with a policy head."""

    spec = catalogue.POLICY
    settings_type = PolicySettings
    default_budget = Budget(nodes=1)

    def _run(self, board: chess.Board, control: SearchControl) -> SearchResult:
        moves = list(board.legal_moves)
        ev = self.evaluator.evaluate([board], temperature=self.settings.temperature)[0]
        if not moves:
            return game_over_result(self.name, terminal_value(board, has_moves=False), 1)
        if not self.evaluator.capabilities.policy:
            raise ValueError(f"the policy search needs a model with a policy head; "
                             f"{self.evaluator.name} has none")
        policy = ev.policy or {m: 1.0 / len(moves) for m in moves}
        best = max(moves, key=lambda m: policy.get(m, 0.0))
        v, d = evaluation_value(ev)
        root = [RootMove(m, prior=policy.get(m, 0.0)) for m in moves]
        root.sort(key=lambda r: r.prior, reverse=True)
        return SearchResult(self.name, best, [best], value_to_score(v), value_to_wdl(v, d), 1, 0.0,
                            depth=1, seldepth=1, root=root)
