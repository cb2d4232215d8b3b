"""The quiescence value (``analysis.search.quiescence``) and the families' displayed-value policies.

The search's value is checked against a plain negamax over the same moves (captures, queen
promotions, every evasion in check; no pruning), which alpha-beta must equal at the root.
"""

from __future__ import annotations

import chess
import pytest

from analysis.displayed_value import QUIESCENCE, STATIC
from analysis.evaluator import ForwardingEvaluator, MaterialEvaluator
from analysis.models import FAMILIES, get_family
from analysis.search.alphabeta import _captures_and_queen_promotions
from analysis.search.base import value_to_score
from analysis.search.quiescence import Quiescence
from analysis.search.shown_value import position_valuer
from tests.conftest import ROOT

# White to move: Nc3xd5 wins the queen standing on d5, which a static value cannot see.
HANGING_QUEEN = "rnb1kbnr/ppp1pppp/8/3q4/8/2N5/PPPP1PPP/R1BQKBNR w KQkq - 0 1"
# An exchange on e5: Nxe5 dxe5 Rxe5+, then the king's evasions (few pieces, so the unpruned
# reference below stays small).
EXCHANGE = "4k3/8/3p4/4n3/8/5N2/4R3/4K3 w - - 0 1"
QUIET = chess.STARTING_FEN


def reference_quiescence(board: chess.Board, value, depth: int = 0, max_depth: int = 16) -> float:
    """Negamax over quiescence's moves with ``value(board)`` (side to move, in [-1, 1]) at the leaves,
    ``max_depth`` plies at most; a mate is worth 10 less a thousandth per ply."""
    if board.is_check():
        moves = list(board.legal_moves)
        if not moves:
            return -10.0 + 0.001 * depth
        if depth >= max_depth:
            return value(board)
        best = -100.0
    else:
        best = value(board)
        if depth >= max_depth:
            return best
        moves = _captures_and_queen_promotions(board)
    for move in moves:
        board.push(move)
        best = max(best, -reference_quiescence(board, value, depth + 1, max_depth))
        board.pop()
    return best


def as_score(value: float) -> float:
    return (1.0 if value > 0 else 0.0) if abs(value) > 9 else value_to_score(value)


def clamped(value):
    return lambda board: max(-0.999, min(0.999, value(board)))


class BatchedMaterial(ForwardingEvaluator):
    """The material count without its one-position path: the search batches each node's successors."""

    value_only = None


@pytest.mark.parametrize("evaluator", [MaterialEvaluator(), BatchedMaterial(MaterialEvaluator())],
                         ids=["one-at-a-time", "batched"])
@pytest.mark.parametrize("fen", [HANGING_QUEEN, EXCHANGE, QUIET])
def test_the_quiescence_value_is_the_negamax_over_captures_with_material(fen, evaluator):
    board = chess.Board(fen)
    q = Quiescence(evaluator).value(board)
    assert q.complete and q.nodes >= 1
    assert q.score == pytest.approx(as_score(reference_quiescence(board, clamped(MaterialEvaluator.value_only))))
    assert q.static_score == pytest.approx(MaterialEvaluator().evaluate([board])[0].score, abs=1e-3)


@pytest.fixture(scope="module")
def giraffe():
    from analysis.checkpoint import load_evaluator

    return load_evaluator(ROOT / "weights" / "giraffe.safetensors", "cpu")


@pytest.mark.parametrize("fen", [HANGING_QUEEN, EXCHANGE])
def test_the_giraffe_quiescence_value_is_the_negamax_over_captures_with_its_network(giraffe, fen):
    board = chess.Board(fen)
    q = Quiescence(giraffe).value(board)
    network = clamped(lambda b: 2.0 * giraffe.evaluate([b])[0].score - 1.0)
    assert q.score == pytest.approx(as_score(reference_quiescence(board, network)), abs=1e-5)


def test_the_shown_giraffe_value_sees_the_hanging_queen_and_keeps_the_static_one(giraffe):
    board = chess.Board(HANGING_QUEEN)
    evaluation = giraffe.evaluate([board])[0]
    shown = position_valuer(QUIESCENCE, giraffe).shown([board], [evaluation])[0]
    assert shown.source == "quiescence" and shown.static_score == pytest.approx(evaluation.score)
    assert shown.score == pytest.approx(Quiescence(giraffe).value(board).score)
    assert shown.score > evaluation.score + 0.1  # the queen is won, which the static value misses


def test_a_search_cut_off_at_its_node_limit_shows_the_static_value(giraffe):
    q = Quiescence(giraffe).value(chess.Board(EXCHANGE), node_limit=2)
    assert not q.complete and q.score == q.static_score


def test_giraffe_declares_the_quiescence_policy_and_every_other_family_the_static_one():
    assert get_family("giraffe").about.displayed_value is QUIESCENCE
    others = [name for name in FAMILIES if name != "giraffe"]
    assert others and all(get_family(name).about.displayed_value is STATIC for name in others)


def test_the_static_policy_passes_evaluations_through():
    board = chess.Board(HANGING_QUEEN)
    evaluator = MaterialEvaluator()
    valuer = position_valuer(STATIC, evaluator)
    evaluation = evaluator.evaluate([board])[0]
    shown = valuer.shown([board], [evaluation])[0]
    assert (shown.score, shown.wdl, shown.static_score, shown.source) == (evaluation.score, None, None, "static")
    assert valuer.evaluator(evaluator) is evaluator
