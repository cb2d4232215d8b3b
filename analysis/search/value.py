"""The value agent: depth-1 value maximisation (Chessformer / ChessBench).

Every legal move's successor is evaluated in one batch and the move that
leaves the opponent the lowest expected score is played. Successors that end
the game get their exact value; as in ChessBench (reference
``neural_engines._update_scores_with_repetitions``), a move after which a
fivefold repetition stands or a threefold repetition can be claimed is scored
as a draw. This is the ChessBench state-value agent.

The ChessBench action-value agent plugs in here: an evaluator whose
capabilities include action values is asked, through ``evaluate_actions``,
for the predicted value of every move directly, in one call, and the search
takes the argmax.
"""

from __future__ import annotations

from dataclasses import dataclass

import chess

from analysis import search_catalogue as catalogue
from analysis.search.base import (Budget, RootMove, Search, SearchControl, SearchResult,
                                  draw_by_rule, evaluation_value, game_over_result, terminal_value,
                                  value_to_score, value_to_wdl)


@dataclass
class ValueSettings:
    """``use_action_values``: prefer the evaluator's action-value head when it has one."""

    use_action_values: bool = True


def allows_repetition_claim(board: chess.Board) -> bool:
    """ChessBench's repetition rule for ``board`` just after a move: fivefold, or a threefold
    claim (now or by the next move). Threefold needs eight reversible plies, so positions with
    a short half-move clock are settled without python-chess's per-move scan."""
    if board.halfmove_clock < 7:
        return False
    return board.is_fivefold_repetition() or board.can_claim_threefold_repetition()


class ValueSearch(Search):
    spec = catalogue.VALUE
    settings_type = ValueSettings
    default_budget = Budget(nodes=1)

    def _run(self, board: chess.Board, control: SearchControl) -> SearchResult:
        moves = list(board.legal_moves)
        if not moves:
            return game_over_result(self.name, terminal_value(board, has_moves=False), 0)
        if self.settings.use_action_values and self.evaluator.capabilities.action_values:
            return self._run_action_values(board, moves)
        # Our value after each move (negated successor value), and draw probability.
        values: dict[chess.Move, tuple[float, float]] = {}
        pending: list[tuple[chess.Move, chess.Board]] = []
        for move in moves:
            board.push(move)
            outcome = terminal_value(board, in_search=False)
            if outcome is None and allows_repetition_claim(board):
                outcome = 0.0
            if outcome is not None:
                values[move] = (-outcome, 1.0 if outcome == 0 else 0.0)
            else:
                pending.append((move, board.copy()))
            board.pop()
        if pending:
            evals = self.evaluator.evaluate([b for _, b in pending])
            for (move, _), ev in zip(pending, evals):
                v, d = evaluation_value(ev)
                values[move] = (-v, d)
        root = []
        for move in moves:
            root.append(RootMove(move, score=value_to_score(values[move][0])))
        best = max(moves, key=lambda m: values[m][0])
        v, d = values[best]
        wdl = value_to_wdl(v, d)  # None when the model has no WDL and the move does not end the game
        mate = 1 if v == 1.0 and _is_mate(board, best) else None
        root.sort(key=lambda r: r.score, reverse=True)
        return SearchResult(self.name, best, [best], value_to_score(v), wdl, len(moves), 0.0,
                            depth=1, seldepth=1, mate=mate, root=root)

    def _run_action_values(self, board: chess.Board, moves: list[chess.Move]) -> SearchResult:
        scores = dict(self.evaluator.evaluate_actions([board])[0])
        for move in moves:
            board.push(move)
            if draw_by_rule(board, in_search=False) or allows_repetition_claim(board):
                scores[move] = 0.5  # ChessBench: a move that allows a repetition claim is a draw
            board.pop()
        best = max(moves, key=lambda m: scores.get(m, 0.0))
        root = sorted((RootMove(m, score=float(scores.get(m, 0.0))) for m in moves),
                      key=lambda r: r.score, reverse=True)
        return SearchResult(self.name, best, [best], float(scores.get(best, 0.0)), None, 1, 0.0,
                            depth=1, seldepth=1, root=root, extras={"action_values": True})


def _is_mate(board: chess.Board, move: chess.Move) -> bool:
    board.push(move)
    try:
        return board.is_checkmate()
    finally:
        board.pop()
