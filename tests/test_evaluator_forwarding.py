"""Wrappers are honest: a search sees through a forwarding evaluator the evaluator it wraps,
so alpha-beta batches (and answers) the same in the worker as on the command line."""

from __future__ import annotations

import chess
import pytest

from analysis.eval.prefetch import PrefetchedEvaluator
from analysis.evaluator import ForwardingEvaluator, MaterialEvaluator
from analysis.search import Budget, make_search
from workers.batching import SharedBatcher

WRAPPERS = [ForwardingEvaluator, PrefetchedEvaluator, SharedBatcher]
POSITIONS = [chess.STARTING_FEN, "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
             "4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1"]


def _run(name: str, evaluator, fen: str):
    budget = Budget(depth=3) if name == "alphabeta" else Budget(nodes=400)
    result = make_search(name, evaluator).run(chess.Board(fen), budget)
    return result.best_move, result.pv, result.score, result.nodes, result.extras


@pytest.mark.parametrize("wrapper", WRAPPERS, ids=lambda w: w.__name__)
def test_a_wrapper_forwards_every_member_a_search_reads(wrapper):
    inner = MaterialEvaluator()
    wrapped = wrapper(inner)
    assert (wrapped.name, wrapped.capabilities) == (inner.name, inner.capabilities)
    assert wrapped.value_only is inner.value_only and wrapped.value_only is not None
    board = chess.Board(POSITIONS[1])
    assert wrapped.cache_key(board) == inner.cache_key(board)


@pytest.mark.parametrize("wrapper", WRAPPERS, ids=lambda w: w.__name__)
@pytest.mark.parametrize("name", ["alphabeta", "probability"])
def test_alpha_beta_batches_the_same_through_a_wrapper(wrapper, name):
    for fen in POSITIONS:
        direct = _run(name, MaterialEvaluator(), fen)
        assert _run(name, wrapper(MaterialEvaluator()), fen) == direct, fen


def test_the_material_value_only_path_is_its_evaluation():
    evaluator = MaterialEvaluator()
    for fen in POSITIONS + ["8/P5k1/8/8/8/8/5Kp1/8 w - - 0 60"]:
        board = chess.Board(fen)
        assert evaluator.value_only(board) == 2.0 * evaluator.evaluate([board])[0].score - 1.0
