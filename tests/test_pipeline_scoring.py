"""Puzzle rule, STS parsing, Kendall tau and the Elo fit, on hand-made and synthetic cases."""

import math
import random

import chess
import numpy as np
import pytest

from analysis.eval.elo import PairResult, elo_difference, fit_elo
from analysis.eval.puzzles import Puzzle, PuzzleReport, solve
from analysis.eval.static_metrics import kendall_tau_b
from analysis.eval.sts import StsReport, load_sts


def scripted(*ucis):
    moves = iter(ucis)
    return lambda board: chess.Move.from_uci(next(moves))


# Black's setup move Kh8-g8, then White mates on the back rank: Ra8# is the
# stored solution, Re8# mates too.
BACK_RANK = Puzzle("mate", "7k/5ppp/8/8/8/8/5PPP/R3R1K1 b - - 0 1", ("h8g8", "a1a8"), 1000)


def test_stored_solution_solves():
    assert solve(BACK_RANK, scripted("a1a8"))


def test_alternative_mate_is_accepted():
    assert solve(BACK_RANK, scripted("e1e8"))


def test_non_mating_alternative_fails():
    assert not solve(BACK_RANK, scripted("a1a7"))


LINE = Puzzle("line", chess.STARTING_FEN, ("e2e4", "e7e5", "g1f3", "b8c6"), 1450)


def test_wrong_second_move_fails_and_full_line_passes():
    assert solve(LINE, scripted("e7e5", "b8c6"))
    assert not solve(LINE, scripted("e7e5", "d7d6"))
    assert not solve(LINE, scripted("c7c5", "b8c6"))


def test_report_buckets_by_400_points():
    report = PuzzleReport()
    report.add(BACK_RANK, True)
    report.add(LINE, False)
    report.add(Puzzle("x", chess.STARTING_FEN, ("e2e4", "e7e5"), 1199), True)
    data = report.to_json()
    assert data["buckets"]["800-1199"] == {"accuracy": 1.0, "solved": 2, "total": 2}
    assert data["buckets"]["1200-1599"]["total"] == 1
    assert data["accuracy"] == pytest.approx(2 / 3, abs=1e-4)


def test_sts_points_from_c8_c9(tmp_path):
    epd = tmp_path / "s.epd"
    epd.write_text('1kr5/3n4/q3p2p/p2n2p1/PppB1P2/5BP1/1P2Q2P/3R2K1 w - - bm f5; id "STS(v1.0) Undermine.001"; '
                   'c8 "10 2 3 2"; c9 "f4f5 d4e5 d4f2 f3g4";\n')
    (pos,) = load_sts(epd)
    assert pos.theme == "Undermine"
    report = StsReport()
    assert report.add(pos, chess.Move.from_uci("d4f2")) == 3
    assert report.add(pos, chess.Move.from_uci("g1h1")) == 0
    assert report.to_json()["themes"]["Undermine"] == {"score": 3, "maximum": 20}


def test_kendall_tau_b():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    assert kendall_tau_b(x, x) == pytest.approx(1.0)
    assert kendall_tau_b(x, -x) == pytest.approx(-1.0)
    assert kendall_tau_b(np.array([1.0]), np.array([5.0])) == 1.0
    # one swapped pair out of six: (5 - 1) / 6
    assert kendall_tau_b(x, np.array([1.0, 3.0, 2.0, 4.0])) == pytest.approx(4 / 6)


def _simulate(ra, rb, games, rng, draw_rate=0.3):
    p = 1 / (1 + 10 ** ((rb - ra) / 400))
    draw_rate = min(draw_rate, 2 * min(p, 1 - p))  # keep the expected score exactly p
    w = d = l = 0
    for _ in range(games):
        if rng.random() < draw_rate:
            d += 1
        elif rng.random() < (p - draw_rate / 2) / (1 - draw_rate):
            w += 1
        else:
            l += 1
    return w, d, l


def test_elo_fit_recovers_known_ratings():
    rng = random.Random(7)
    truth = {"anchor": 1350.0, "b": 1550.0, "c": 1200.0, "d": 1800.0}
    results = []
    names = list(truth)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if abs(truth[a] - truth[b]) > 500:
                continue  # like a real ladder: only near neighbours meet
            results.append(PairResult(a, b, *_simulate(truth[a], truth[b], 3000, rng)))
    fit = fit_elo(results, anchor="anchor", anchor_rating=1350.0)
    for name, rating in truth.items():
        assert abs(fit.ratings[name] - rating) < 25, (name, fit.ratings[name])
        lo, hi = fit.interval(name)
        assert lo - 25 <= rating <= hi + 25
    assert fit.stderr["anchor"] == 0.0 and fit.stderr["d"] > fit.stderr["b"]  # d is two hops from the anchor


def test_head_to_head_difference_and_interval():
    even = elo_difference(40, 20, 40)
    assert even["elo_diff"] == pytest.approx(0.0, abs=1e-6)
    assert even["ci95"][0] < 0 < even["ci95"][1]
    sweep = elo_difference(10, 0, 0)  # finite thanks to the Jeffreys draw
    assert math.isfinite(sweep["elo_diff"]) and sweep["elo_diff"] > 300
    with pytest.raises(ValueError):
        elo_difference(0, 0, 0)


def test_card_tables_render_every_measured_figure_and_say_what_is_missing():
    from analysis.eval.report import render_markdown

    puzzles = {"accuracy": 0.125, "solved": 125, "total": 1000,
               "buckets": {"1200-1599": {"solved": 100, "total": 700, "accuracy": 100 / 700},
                           "800-1199": {"solved": 25, "total": 300, "accuracy": 25 / 300}}}
    metrics = {
        "puzzles_policy": puzzles,
        "sts_policy": {"score": 4321, "maximum": 15000, "themes": {"Undermine": {"score": 300, "maximum": 1000}}},
        "metrics_policy": {"action_accuracy": 0.4, "kendall_tau": 0.2125, "positions": 10811},
        "match_policy_vs_sf1350": {"b": "stockfish-1350", "wins": 1, "draws": 4, "losses": 95, "games": 100,
                                   "elo_diff": -600.4, "ci95": [-800.2, -400.9]},
        "baseline_puzzles": {**puzzles, "accuracy": 0.08, "solved": 80},
    }
    text = render_markdown(metrics)
    policy_row = next(line for line in text.splitlines() if line.startswith("| policy agent"))
    assert "12.5% (125/1000)" in policy_row and "4321 / 15000" in policy_row
    assert "40.0% (n=10811)" in policy_row and "0.212" in policy_row
    assert "+1 =4 -95 (100 games), -600 [-800, -401]" in policy_row
    value_row = next(line for line in text.splitlines() if line.startswith("| value agent"))
    assert value_row.count("not measured") == 5
    assert "800-1199 25/300 (8%), 1200-1599 100/700 (14%)" in text  # buckets in rating order
    assert "Undermine 300" in text
    assert "probability-limited" not in text  # an optional row, not measured here
    text = render_markdown({**metrics, "sts_probability": {"score": 5000, "maximum": 15000, "themes": {}}})
    row = next(line for line in text.splitlines() if line.startswith("| probability-limited search"))
    assert "5000 / 15000" in row and row.count("not measured") == 4
