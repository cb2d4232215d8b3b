"""The decision timeline in a job: read from phase 1's own forward passes, stored with each
position's evaluation, sent with the plies and in the job's results, equal to the logit lens."""

from __future__ import annotations

import pytest

from analysis.lens import lens_for
from analysis.lens.core import logit_lens
from tests.web.conftest import OPERA_GAME
from webapp.jobs.gameinput import board_for, parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.live.messages import job_snapshot
from webapp.jobs.models import PositionResult
from webapp.jobs.run.runner import JobRun
from webapp.networks.model_cache import ModelCache

pytestmark = pytest.mark.django_db


def _run(job, evaluator, **options):
    messages = []
    done = JobRun(job, evaluator, lambda kind, payload: messages.append((kind, payload)), **options).run()
    assert done.status == "done", done.error
    return done, [item for kind, payload in messages if kind == "plies" for item in payload["items"]]


def _forward_passes(model) -> list:
    calls = []
    model.register_forward_pre_hook(lambda _m, _a: calls.append(1))
    return calls


def test_each_ply_gets_the_logit_lens_timeline_from_the_evaluation_pass(tiny_network, settings):
    settings.SIGHTLINE_BATCH_SIZE = 16
    evaluator = ModelCache().get(tiny_network)
    torch_evaluator = evaluator.inner
    passes = _forward_passes(torch_evaluator.model)
    _run(create_job(parse_pgn(OPERA_GAME), tiny_network, "policy", 1, dispatch=False), evaluator, timeline=False)
    without = len(passes)
    PositionResult.objects.all().delete()  # nothing cached: the same passes again, timeline on
    job = create_job(parse_pgn(OPERA_GAME), tiny_network, "policy", 1, dispatch=False)
    done, plies = _run(job, evaluator)
    assert len(passes) - without == without  # the timeline ran no forward pass of its own

    adapter = lens_for(torch_evaluator.model, torch_evaluator.encoding)
    snapshot = job_snapshot(done)["results"]
    checked = 0
    for item in plies:
        node = job.nodes[item["node"]]
        timeline = item["eval"]["timeline"]
        assert snapshot[str(node["id"])]["eval"]["timeline"] == timeline  # the job's results say the same
        if node.get("outcome"):
            assert "why" in timeline
            continue
        view = logit_lens(adapter, board_for(job.nodes, node["id"]))
        assert timeline["readouts"] == view.readouts
        assert timeline["final"] == view.top()[-1] and timeline["final_from"] == view.settles(view.top()[-1])
        played = job.nodes[node["children"][0]]["uci"] if node["children"] else None
        assert timeline["played"] == played
        if played is not None:
            read_from = max(timeline["final_from"] - 1, 0)  # read back from the output only as far as needed
            ranks = view.ranks[:, view.moves.index(played)].tolist()
            assert timeline["played_ranks"] == [None] * read_from + ranks[read_from:]
            assert timeline["played_from"] == view.settles(played)
            checked += 1
    assert checked == len(job.nodes) - 2  # every move of the game and its variation
    stored = PositionResult.objects.filter(settings_key="eval").first().data["timeline"]
    points_read = len(stored["readouts"]) - stored["ranks_from"]
    assert len(stored["moves"]) > 1 and len(stored["ranks"]) == len(stored["moves"]) * points_read


def test_off_the_evaluations_carry_none_and_a_network_without_layers_says_why(tiny_network, material_network):
    job = create_job(parse_pgn("1. e4 e5 *"), tiny_network, "policy", 1, dispatch=False)
    _, plies = _run(job, ModelCache().get(tiny_network), timeline=False)
    assert plies and all("timeline" not in item["eval"] for item in plies)

    job = create_job(parse_pgn("1. e4 e5 *"), material_network, "value", 1, dispatch=False)
    _, plies = _run(job, ModelCache().get(material_network))
    assert {item["eval"]["timeline"]["why"] for item in plies} == {
        "material runs no network with layers, so it has no readout points"}
