"""``sts`` and ``puzzles`` with a time budget and a spread-out subset (``--movetime``, ``--every``):
how the Giraffe card's 0.1 s / 1 s rows and its STS subsets at large node counts are measured."""

import json

import pytest

from analysis.__main__ import main
from analysis.eval.agents import SearchAgent
from analysis.evaluator import MaterialEvaluator
from tests.conftest import require_shared_data


def test_every_spreads_the_subset_over_the_themes(capsys):
    epd = require_shared_data("suites/sts_v3.epd")
    assert main(["sts", "--model", "material", "--algo", "probability", "--nodes", "30", "--every", "100",
                 "--limit", "4", "--epd", str(epd), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["positions"] == 4 and len(report["themes"]) == 4  # positions 0, 100, 200, 300


def test_movetime_bounds_each_search(capsys):
    import chess

    agent = SearchAgent(MaterialEvaluator(), "alphabeta", movetime_ms=30)
    assert agent.budget.movetime_ms == 30 and agent.budget.nodes is None and agent.name.endswith(":30ms")
    assert agent.choose(chess.Board()) in chess.Board().legal_moves
    csv = require_shared_data("puzzles/lichess_puzzles_1000.csv")
    assert main(["puzzles", "--model", "material", "--algo", "alphabeta", "--movetime", "20", "--every", "50",
                 "--limit", "3", "--csv", str(csv), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == 3


@pytest.mark.parametrize("flag", ["--every", "--movetime"])
def test_bad_budget_is_a_clear_error(flag, capsys):
    epd = require_shared_data("suites/sts_v3.epd")
    assert main(["sts", "--model", "material", "--algo", "probability", flag, "0", "--epd", str(epd)]) == 2
    assert f"{flag} must be at least 1" in capsys.readouterr().err


@pytest.mark.parametrize("model", ["material", "weights/cb-sv.safetensors"])  # neither has a policy head
def test_a_policy_search_on_a_value_only_network_is_a_one_line_error(model, capsys):
    csv = require_shared_data("puzzles/lichess_puzzles_1000.csv")
    assert main(["puzzles", "--model", model, "--algo", "policy", "--limit", "2", "--csv", str(csv), "--json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the policy search needs a model with a policy head;")
    assert err.count("\n") == 1 and "Traceback" not in err
