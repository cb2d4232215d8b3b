"""Results are stored or the job fails saying why: nothing non-finite, nothing dropped silently."""

import math
from pathlib import Path

import pytest
import torch
from django.db import IntegrityError, connection, transaction

from analysis.checkpoint import load_checkpoint
from analysis.models.inference import TorchEvaluator
from tests.web.conftest import SHORT_GAME
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.models import PositionResult
from webapp.networks.model_cache import ModelCache
from webapp.jobs.run.runner import JobRun, NonFiniteResult, store_results

pytestmark = pytest.mark.django_db


def nan_evaluator(checkpoint: Path) -> TorchEvaluator:
    model, _ = load_checkpoint(checkpoint)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.fill_(math.nan)
    return TorchEvaluator(model, device="cpu", name="all-nan")


def run(job, evaluator):
    messages = []
    return JobRun(job, evaluator, lambda kind, payload: messages.append((kind, payload))).run(), messages


def test_a_network_answering_nan_fails_the_job_naming_the_position(tiny_network, tiny_checkpoint):
    # Once "done, evaluated 5/5" with no row stored (SQLite dropped the NaN rows).
    job = create_job(parse_pgn("1. e4 e5 *"), tiny_network, "policy", 1, dispatch=False)
    finished, messages = run(job, nan_evaluator(tiny_checkpoint))
    assert finished.status == "failed" and finished.evaluated == 0
    assert finished.error.startswith("NonFiniteOutput: all-nan gave non-finite output (wdl, q, q_err, st, st_err, "
                                     "policy) for the position rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq")
    assert messages[-1][1]["status"] == "failed" and "non-finite" in messages[-1][1]["error"]
    assert PositionResult.objects.count() == 0


def test_a_result_with_nan_is_refused_before_the_database():
    good = PositionResult(position_key="a" * 64, network_checksum="n", settings_key="eval", data={"score": 0.5})
    bad = PositionResult(position_key="b" * 64, network_checksum="n", settings_key="eval", data={"score": math.nan})
    with pytest.raises(NonFiniteResult, match=r"the eval result for position bbbbbbbbbbbb holds NaN"):
        store_results([good, bad])
    assert PositionResult.objects.count() == 0


def test_a_conflicting_row_is_updated_and_any_other_failure_raises():
    def row(data):
        return PositionResult(position_key="a" * 64, network_checksum="n", settings_key="eval", data=data)

    store_results([row({"score": 0.25})])
    store_results([row({"score": 0.75})])  # another job stored the same position meanwhile
    assert list(PositionResult.objects.values_list("data", flat=True)) == [{"score": 0.75}]
    broken = PositionResult(position_key="c" * 64, network_checksum="n", settings_key="eval", data=None)
    if connection.vendor == "sqlite":  # what the old insert did: no error, no row
        PositionResult.objects.bulk_create([broken], ignore_conflicts=True)
        assert not PositionResult.objects.filter(position_key="c" * 64).exists()
    with pytest.raises(IntegrityError), transaction.atomic():
        store_results([broken])


def test_a_job_finishes_when_another_stores_its_positions_at_the_same_time(tiny_network):
    job = create_job(parse_pgn(SHORT_GAME), tiny_network, "policy", 1, dispatch=False)
    inner = ModelCache().get(tiny_network)

    class Racing:
        """Before each batch's rows are saved, another job stores the same positions."""

        def __getattr__(self, name):
            return getattr(inner, name)

        def evaluate(self, boards, **kwargs):
            results = inner.evaluate(boards, **kwargs)
            from webapp.jobs.results import digest_key

            for board in boards:
                PositionResult.objects.get_or_create(position_key=digest_key(inner.cache_key(board)),
                                                     network_checksum=tiny_network.checksum, settings_key="eval",
                                                     defaults={"data": {"from": "the other job"}})
            return results

    finished, _ = run(job, Racing())
    assert finished.status == "done", finished.error
    assert finished.evaluated == finished.searched == 9
    # The game's own positions carry this job's evaluations (the judgements' extra successors, which
    # the racing writer also stored, are not the job's positions).
    keys = {node["key"] for node in finished.nodes}
    stored = PositionResult.objects.filter(settings_key="eval", position_key__in=keys)
    assert stored.count() == 9 and all("policy" in data for data in stored.values_list("data", flat=True))


@pytest.mark.parametrize("search, budget", [("value", 1), ("mcts", 24), ("gumbel", 16), ("probability", 40),
                                            ("alphabeta", 2)])
def test_every_search_stores_one_row_per_position(tiny_network, search, budget):
    # A finished game (mate, then nothing to search) included: every result must be storable JSON.
    job = create_job(parse_pgn("1. f3 e5 2. g4 Qh4# 0-1"), tiny_network, search, budget, dispatch=False)
    finished, _ = run(job, ModelCache().get(tiny_network))
    assert finished.status == "done", finished.error
    assert PositionResult.objects.filter(settings_key=f"{search}:{budget}").count() == 5
