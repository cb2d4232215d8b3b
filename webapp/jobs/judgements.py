"""Move judgements ("?!", "?", "??"): the drop from the best move's value to the played move's value,
both valued in the same parent position.

Comparing the parent's evaluation with the child's compares two unrelated network outputs (a
network biased towards the side to move then marks nearly every move), so both values here come
from one source at the parent: the search's root statistics when the search valued both moves,
else the network's evaluations of both successors, made in one batch. Values are expected scores
in [0, 1] for the side that moved.
"""

from __future__ import annotations

from dataclasses import dataclass

import chess

from analysis.search.base import terminal_value, value_to_score

# lichess's thresholds: 0.1 / 0.2 / 0.3 win-chance steps on [-1, 1] are 0.05 / 0.10 / 0.15 in expected score.
THRESHOLDS = ((0.15, "??", "blunder"), (0.10, "?", "mistake"), (0.05, "?!", "inaccuracy"))
# Where the values came from (``source`` in a stored judgement).
FROM_SEARCH = "search"
FROM_NETWORK = "network"
EXACT, UPPER = "exact", "upper"


@dataclass(frozen=True)
class MoveValue:
    """A root move's expected score for the mover; ``upper`` when a cut-off left only an upper bound."""

    score: float
    bound: str = EXACT


@dataclass(frozen=True)
class JudgeRequest:
    """One played move to judge: the parent board (with its history), the move, the parent's search.

    ``node_id`` is the node the move leads to, ``parent_id`` and ``parent_key`` its parent's.
    """

    node_id: int
    parent_id: int
    parent_key: str
    board: chess.Board
    played: chess.Move
    search: dict


def judgement_settings_key(search_settings_key: str, played_uci: str) -> str:
    """``PositionResult.settings_key`` of the judgement of ``played_uci`` at a parent position."""
    return f"{search_settings_key}/judge/{played_uci}"


def root_values_json(result) -> dict[str, list]:
    """{uci: [score, bound]} for every root move a search valued (stored with the search result)."""
    out = {}
    for r in result.root:
        score = r.q if r.q is not None else r.score
        if score is not None:
            out[r.move.uci()] = [round(float(score), 5), UPPER if r.bound == "upper" else EXACT]
    return out


def search_values(search: dict) -> dict[str, MoveValue]:
    return {uci: MoveValue(score, bound) for uci, (score, bound) in (search.get("root_values") or {}).items()}


def verdict(drop: float) -> tuple[str, str] | tuple[None, None]:
    """(glyph, name) for an expected-score drop, or (None, None) below the smallest threshold."""
    for limit, glyph, name in THRESHOLDS:
        if drop >= limit:
            return glyph, name
    return None, None


def judgement_json(board: chess.Board, best: chess.Move, best_value: MoveValue, played: chess.Move,
                   played_value: MoveValue, source: str) -> dict:
    """What is stored and sent. With an upper bound on the played move, the drop is a lower bound."""
    # Judged as stored and shown (rounded), so 0.60 - 0.50 is a 0.10 drop, not 0.0999...
    drop = round(max(0.0, best_value.score - played_value.score), 5) if best != played else 0.0
    glyph, name = verdict(drop)
    return {"played": played.uci(), "best": best.uci(), "best_san": board.san(best),
            "best_score": round(best_value.score, 5), "played_score": round(played_value.score, 5),
            "bound": played_value.bound, "drop": drop, "source": source, "glyph": glyph, "name": name}


def judge_from_search(request: JudgeRequest) -> dict | None:
    """The judgement from the parent's search alone, or None when it did not value both moves."""
    best_uci = request.search.get("bestmove")
    if not best_uci:
        return None
    values = search_values(request.search)
    best, played = chess.Move.from_uci(best_uci), request.played
    if best == played and best_uci in values:
        return judgement_json(request.board, best, values[best_uci], played, values[best_uci], FROM_SEARCH)
    if best_uci not in values or played.uci() not in values or values[best_uci].bound != EXACT:
        return None
    return judgement_json(request.board, best, values[best_uci], played, values[played.uci()], FROM_SEARCH)


def judge_with_network(evaluator, requests: list[JudgeRequest]) -> list[dict]:
    """Judge each request by the network's values of the best and the played successor.

    Every successor that needs the network is evaluated in ONE ``evaluator.evaluate`` call
    (successors that end the game take their exact value instead).
    """
    boards: list[chess.Board] = []
    slot_of: dict[tuple[str, chess.Move], float | int] = {}  # a successor shared by requests is evaluated once
    plans = []
    for request in requests:
        best = chess.Move.from_uci(request.search["bestmove"])
        slots = []
        for move in (best, request.played):
            if (request.parent_key, move) not in slot_of:
                successor = _successor(request.board, move)
                outcome = terminal_value(successor, in_search=False)
                slot_of[request.parent_key, move] = outcome if outcome is not None else len(boards)
                if outcome is None:
                    boards.append(successor)
            slots.append(slot_of[request.parent_key, move])
        plans.append((request, best, slots))
    evaluations = evaluator.evaluate(boards) if boards else []

    def mover_value(slot) -> MoveValue:
        if isinstance(slot, float):  # the game's result after the move, from the opponent's side
            return MoveValue(value_to_score(-slot))
        return MoveValue(1.0 - float(evaluations[slot].score))

    out = []
    for request, best, slots in plans:
        best_value, played_value = mover_value(slots[0]), mover_value(slots[-1])
        out.append(judgement_json(request.board, best, best_value, request.played, played_value, FROM_NETWORK))
    return out


def judge_all(evaluator, requests: list[JudgeRequest]) -> list[dict | None]:
    """Judgements in request order: from the search where it can, the rest from one network batch.

    None where the parent's search named no best move (nothing to compare with).
    """
    from_search = [judge_from_search(r) for r in requests]
    need_network = [i for i, j in enumerate(from_search) if j is None and requests[i].search.get("bestmove")]
    if need_network:
        for i, judgement in zip(need_network, judge_with_network(evaluator, [requests[i] for i in need_network])):
            from_search[i] = judgement
    return from_search


def _successor(board: chess.Board, move: chess.Move) -> chess.Board:
    child = board.copy(stack=True)
    child.push(move)
    return child


def legend(search: str, valuer: str = "the network") -> str:
    """For the game page: which values the marks come from, for this job's search.

    ``valuer`` names what evaluates positions ("the network", or the material count).
    """
    scale = ", ".join(f"{glyph} from {round(100 * limit)}%" for limit, glyph, _ in reversed(THRESHOLDS))
    network = f"both successors valued by {valuer} in one batch"
    if search == "policy":
        how = f"from {valuer}'s best move (its policy's top move) to the played move, {network}"
    elif search == "value":
        how = (f"from the value search's best move to the played move, both valued by the value search "
               f"({valuer} on every successor)")
    else:
        bounds = "root scores; after a cut-off only an upper bound, so the drop shown is a lower bound"
        stat = "root Q" if search in ("mcts", "gumbel") else bounds
        how = (f"from {search}'s best move to the played move, both valued by {search} ({stat}); where {search} "
               f"did not value the played move, {network}")
    return (f"Marks ({scale} expected-score drop, lichess's thresholds): the drop {how}, in the position before "
            "the move. A move has no mark until both values are known.")


def short_legend(search: str, valuer: str = "the network") -> str:
    """The one line shown under the moves (``legend`` is its tooltip)."""
    same = "in the same position"
    if search == "policy":
        return f"Marks: drop from {valuer}'s best move to the played move, both valued by {valuer} {same}."
    if search == "value":
        return f"Marks: drop from the best move to the played move, both valued by the value search {same}."
    return (f"Marks: drop from {search}'s best move to the played move, both valued by {search} {same} "
            f"(by {valuer} where {search} did not value the played move).")
