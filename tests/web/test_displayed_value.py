"""The value a job shows for each position follows the network family's ``displayed_value`` policy:
Giraffe's is its quiescence search's (the static value stored beside it); every other family's is
the network's output as it is."""

from __future__ import annotations

import chess
import pytest

from analysis.evaluator import MaterialEvaluator
from analysis.search.quiescence import Quiescence
from tests.conftest import ROOT
from webapp.jobs.gameinput import board_for, parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.models import EVAL_SETTINGS_KEY, PositionResult
from webapp.jobs.results import job_results
from webapp.jobs.run.runner import JobRun
from webapp.networks.model_cache import ModelCache

pytestmark = pytest.mark.django_db

# White to move wins the queen on d5 (Nxd5), which the static value does not see.
HANGING_QUEEN = "rnb1kbnr/ppp1pppp/8/3q4/8/2N5/PPPP1PPP/R1BQKBNR w KQkq - 0 1"
PGN = f'[SetUp "1"]\n[FEN "{HANGING_QUEEN}"]\n\n1. Nxd5 *'


@pytest.fixture
def shipped_giraffe(db):
    from webapp.networks.registry import register_checkpoint

    return register_checkpoint(ROOT / "weights" / "giraffe.safetensors", "giraffe-shipped")


def analyse(network, search="policy", budget=1):
    job = create_job(parse_pgn(PGN), network, search, budget, dispatch=False)
    messages = []
    finished = JobRun(job, ModelCache().get(network), lambda kind, payload: messages.append((kind, payload))).run()
    assert finished.status == "done", finished.error
    return finished, messages


def test_giraffes_shown_score_is_its_quiescence_value_and_the_static_one_is_kept(shipped_giraffe):
    job, messages = analyse(shipped_giraffe)
    evaluator = ModelCache().get(shipped_giraffe)
    board = board_for(job.nodes, 0)
    static = evaluator.evaluate([board])[0].score
    quiescent = Quiescence(evaluator).value(board)

    results = job_results(job)
    shown = results[0]["eval"]
    assert shown["value_source"] == "quiescence" and shown["value_nodes"] >= 2
    assert shown["score"] == pytest.approx(quiescent.score, abs=1e-5)
    assert shown["static_score"] == pytest.approx(static, abs=1e-5)
    assert shown["score"] > shown["static_score"] + 0.1  # the won queen: what the static value swings past
    # Cached under its own settings key, so a static row from before never stands in for it.
    assert PositionResult.objects.filter(settings_key="eval/quiescence").count() == 2
    assert not PositionResult.objects.filter(settings_key=EVAL_SETTINGS_KEY).exists()

    # The page's message carries both, as White's (White is to move at the root).
    sent = [item for kind, payload in messages if kind == "plies" for item in payload["items"]]
    root = next(item for item in sent if item["node"] == 0)["eval"]
    assert root["score"] == pytest.approx(quiescent.score, abs=1e-5)
    assert root["static_score"] == pytest.approx(static, abs=1e-5)

    # The network's own mark of Nxd5 (the policy search values no move) compares shown values too.
    judgement = results[1]["judgement"]
    successor = board_for(job.nodes, 1)
    assert judgement["source"] == "network"
    assert judgement["played_score"] == pytest.approx(1.0 - Quiescence(evaluator).value(successor).score, abs=1e-5)


@pytest.mark.parametrize("which", ["tiny_network", "material_network"])
def test_other_networks_show_their_static_value(request, which):
    network = request.getfixturevalue(which)
    job, _ = analyse(network, search="value")
    evaluator = ModelCache().get(network)
    board = board_for(job.nodes, 0)
    shown = job_results(job)[0]["eval"]
    assert shown["score"] == pytest.approx(evaluator.evaluate([board])[0].score, abs=1e-5)
    assert "static_score" not in shown and "value_source" not in shown
    assert PositionResult.objects.filter(settings_key=EVAL_SETTINGS_KEY).count() == 2
    if which == "material_network":  # the material count sees no capture coming: one queen down
        assert shown["score"] == pytest.approx(MaterialEvaluator().evaluate([chess.Board(HANGING_QUEEN)])[0].score,
                                               abs=1e-5)
