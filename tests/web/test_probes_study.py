"""Knowing vs doing as a study (issue 39, part 5): the ``knowing_doing`` method's doing flags on
hand-made positions, and a run over seeded random-game positions on the tiny untrained network:
doing rates with Wilson intervals beside the probes' best AUROC (or the reason there is none)."""

from __future__ import annotations

import json

import chess

from analysis.studies import PositionSource, StudySpec, methods, run_study
from analysis.studies.methods.knowing_doing import doing
from tests.web.test_probes import random_fens


def test_doing_flags_follow_the_move():
    hanging = chess.Board("4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1")  # the black queen on d5 hangs to the rook
    assert doing(hanging, chess.Move.from_uci("d2d5"))["opp_en_prise"] is True
    assert doing(hanging, chess.Move.from_uci("e1f1"))["opp_en_prise"] is False
    assert doing(hanging, chess.Move.from_uci("e1f1"))["mate_in_one"] is None  # no mate here: not counted
    mate = chess.Board("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1")
    assert doing(mate, chess.Move.from_uci("a1a8"))["mate_in_one"] is True
    assert doing(mate, chess.Move.from_uci("a1a2"))["mate_in_one"] is False
    attacked = chess.Board("4k3/8/8/8/8/2p5/3N4/4K3 w - - 0 1")  # the knight on d2 is attacked by a pawn
    assert doing(attacked, chess.Move.from_uci("d2f3"))["own_en_prise"] is True
    assert doing(attacked, chess.Move.from_uci("e1f1"))["own_en_prise"] is False


def test_a_knowing_doing_study_reports_both_sides(tiny_checkpoint):
    assert "knowing_doing" in methods.names()
    spec = StudySpec("knowing_doing", str(tiny_checkpoint), PositionSource("fens", text="\n".join(random_fens(300))),
                     {"positions": 60, "components": 16, "bootstrap": 20}, 0)
    summary = run_study(spec, threads=1)["summary"]
    json.dumps(summary)
    assert [row["concept"] for row in summary["table"]] == ["opp_en_prise", "own_en_prise", "mate_in_one"]
    rate = summary["doing"]["opp_en_prise"]
    assert rate["n"] > 0 and rate["low"] <= rate["score"] <= rate["high"]
    for name, knowing in summary["knowing"].items():
        if "why" in knowing:
            assert "too few" in knowing["why"]
            continue
        cell = knowing["trained"]
        assert cell["low"] <= cell["score"] <= cell["high"] and knowing["best_point"]
        assert knowing["untrained"] is not None
    assert "trained" in summary["knowing"]["opp_en_prise"]  # random games hang pieces often
