"""lichess's game review maths (analysis/game_review.py) held to lichess's own tests and formulas.

The accuracy cases are lila's modules/analyse/src/test/AccuracyPercentTest.scala: White-view
centipawns after each move, the first position at lila's initial +15."""

from __future__ import annotations

import math

import pytest

from analysis.game_review import (
    MATE_CREATED, MATE_LOST, Eval, game_accuracy, mark, move_accuracy, review, win_percent,
)


def lila_accuracy(cps: list[int], white_starts: bool = True) -> dict:
    wins = [Eval(cp, None).win_percent() for cp in [15, *cps]]
    return game_accuracy(wins, white_starts)


@pytest.mark.parametrize("cps, white, black", [
    ([15, 15], (100, 1), (100, 1)),
    ([-900, -900], (10, 5), (100, 1)),
    ([15, 900], (100, 1), (10, 5)),
    ([-900, 0], (10, 5), (10, 5)),
    ([15] * 20, (100, 1), (100, 1)),
    ([15] * 20 + [-900], (50, 5), (100, 1)),
    ([15] * 21 + [900], (100, 1), (50, 5)),
    ([-50, 15] * 5, (76, 8), (76, 8)),
    ([-50, 15] * 50, (76, 8), (76, 8)),
    ([-135, 15] * 50, (54, 8), (54, 8)),
    ([-435, 15] * 50, (20, 8), (20, 8)),
])
def test_game_accuracy_passes_lilas_own_cases(cps, white, black):
    accuracy = lila_accuracy(cps)
    assert accuracy["white"] == pytest.approx(white[0], abs=white[1])
    assert accuracy["black"] == pytest.approx(black[0], abs=black[1])


@pytest.mark.parametrize("cps, black, white", [
    ([900, 900], (10, 5), (100, 1)), ([15, -900], (100, 1), (10, 5)), ([900, 0], (10, 5), (10, 5)),
])
def test_game_accuracy_when_black_moves_first(cps, black, white):
    accuracy = lila_accuracy(cps, white_starts=False)
    assert accuracy["black"] == pytest.approx(black[0], abs=black[1])
    assert accuracy["white"] == pytest.approx(white[0], abs=white[1])


def test_win_percent_and_move_accuracy_are_lichess_formulas():
    assert win_percent(0) == 50
    for cp in (-700, -35, 120, 1000):
        assert win_percent(cp) == pytest.approx(50 + 50 * (2 / (1 + math.exp(-0.00368208 * cp)) - 1))
    assert Eval(5000, None).win_percent() == Eval(None, 3).win_percent() == win_percent(1000)  # ceiled
    assert move_accuracy(60, 60) == move_accuracy(40, 70) == 100
    assert move_accuracy(70, 40) == pytest.approx(103.1668 * math.exp(-0.04354 * 30) - 3.1669 + 1, abs=0.01)
    assert move_accuracy(100, 0) == 0


def chances_drop(before_cp: int, after_cp: int) -> float:
    """lichess's winning chances ([-1, 1]) the mover lost: before is the mover's, after the opponent's."""
    chance = lambda cp: 2 / (1 + math.exp(-0.00368208 * max(-1000, min(1000, cp)))) - 1  # noqa: E731
    return chance(before_cp) - chance(-after_cp)


@pytest.mark.parametrize("before, after", [(30, -20), (30, 20), (30, 90), (30, 200), (250, 150), (0, 400),
                                           (-300, 500), (800, -500), (1200, -900), (50, 1500)])
def test_marks_follow_the_drop_in_winning_chances(before, after):
    drop = chances_drop(before, after)
    expected = "??" if drop >= 0.3 else "?" if drop >= 0.2 else "?!" if drop >= 0.1 else None
    got = mark(Eval(before, None), Eval(after, None))
    assert (got.glyph if got else None) == expected


def test_mate_marks_and_the_engines_own_move():
    walked_in = mark(Eval(50, None), Eval(None, 3))  # the opponent now mates in 3
    assert (walked_in.glyph, walked_in.reason) == ("??", MATE_CREATED)
    assert mark(Eval(-1200, None), Eval(None, 3)).glyph == "?!"  # lost anyway: a small mark
    let_slip = mark(Eval(None, 2), Eval(-150, None))
    assert (let_slip.glyph, let_slip.reason) == ("??", MATE_LOST)
    assert mark(Eval(None, 2), Eval(-800, None)).glyph == "?"  # still winning by 8 pawns
    assert mark(Eval(None, 2), Eval(None, -1)) is None  # mate in 1 after mate in 2: on track
    assert mark(Eval(None, 1), Eval(None, 0)) is None  # the mate itself
    assert mark(Eval(300, None), Eval(200, None), played_is_best=True) is None


def test_review_counts_marks_and_centipawn_loss_per_player():
    # White's view: 0, 0, -300 (White's 2nd move loses 3 pawns), -300; each Eval is for the side to move.
    white_view = [20, 20, 20, -300, -300]
    evals = [Eval(cp if i % 2 == 0 else -cp, None) for i, cp in enumerate(white_view)]
    marks = [mark(evals[i], evals[i + 1]) for i in range(4)]
    figures = review(evals, marks)
    assert figures["white"]["blunders"] + figures["white"]["mistakes"] == 1 and figures["white"]["acpl"] == 160
    assert figures["black"]["acpl"] == 0 and figures["black"]["accuracy"] == 100
    assert figures["white"]["accuracy"] < 60 and figures["white"]["moves"] == figures["black"]["moves"] == 2
