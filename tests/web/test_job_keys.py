"""A job's position keys are set when it is created, from the board alone (issue 10): the
worker reads them and never rewrites the job's nodes."""

import pytest

from analysis.evaluator import key_digest
from tests.web.conftest import SHORT_GAME
from webapp.jobs.gameinput import node_boards, parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.models import AnalysisJob
from webapp.networks.model_cache import ModelCache
from webapp.jobs.run.runner import JobRun

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("network_fixture", ["tiny_network", "material_network"])
def test_keys_are_known_at_creation_and_match_the_evaluators(request, network_fixture):
    network = request.getfixturevalue(network_fixture)
    job = create_job(parse_pgn(SHORT_GAME), network, "value", 1, dispatch=False)
    stored = AnalysisJob.objects.get(pk=job.pk).nodes
    evaluator = ModelCache().get(network)
    assert [n["key"] for n in stored] == [key_digest(evaluator.cache_key(b)) for b in node_boards(stored)]
    finished = JobRun(job, evaluator, lambda kind, payload: None).run()
    assert finished.status == "done", finished.error
    assert AnalysisJob.objects.get(pk=job.pk).nodes == stored  # the worker left the input alone
