"""A ChessBench action-value network on the site: it registers and is offered like any other,
the worker stores each legal move's predicted win probability beside the policy (one forward
pass serves both), the game page renders them, and its attention maps come in real squares."""

import base64

import chess
import numpy as np
import pytest
import torch

from analysis.checkpoint import save_checkpoint
from analysis.evaluator import key_digest
from analysis.models import get_family
from tests.web.conftest import SHORT_GAME
from webapp.jobs.attention_maps import dequantise
from webapp.jobs.gameinput import node_boards, parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.models import AnalysisJob
from webapp.networks.models import Network
from webapp.networks.registry import register_checkpoint
from webapp.lens import tasks
from webapp.networks.model_cache import ModelCache
from webapp.jobs.run.runner import JobRun

pytestmark = pytest.mark.django_db


@pytest.fixture
def cb_network(tmp_path):
    torch.manual_seed(0)
    family = get_family("chessbench")
    path = save_checkpoint(tmp_path / "cb.safetensors", family.build(family.preset("cb-tiny")), trained=False)
    return register_checkpoint(path, "cb-test")


def test_a_chessbench_network_registers_with_its_capabilities(cb_network, client):
    assert cb_network.family == "chessbench" and cb_network.preset == "cb-tiny" and not cb_network.trained
    caps = cb_network.caps
    assert caps.action_values and caps.policy and not caps.wdl and caps.attention == (2, 4)
    assert Network.objects.offered().filter(name="cb-test").exists()
    assert 'value="cb-test"' in client.get("/").content.decode()


def test_the_worker_stores_action_values_beside_the_policy(cb_network, client, monkeypatch):
    job = create_job(parse_pgn(SHORT_GAME), cb_network, "value", 1, dispatch=False)
    stored = AnalysisJob.objects.get(pk=job.pk).nodes
    evaluator = ModelCache().get(cb_network)
    assert [n["key"] for n in stored] == [key_digest(evaluator.cache_key(b)) for b in node_boards(stored)]
    torch_evaluator = evaluator
    while not hasattr(torch_evaluator, "forward"):  # under the worker's batching wrappers
        torch_evaluator = torch_evaluator.inner
    forwards = []
    real_forward = torch_evaluator.forward
    monkeypatch.setattr(torch_evaluator, "forward", lambda *a, **k: forwards.append(len(a[0])) or real_forward(*a, **k))
    messages = []
    finished = JobRun(job, evaluator, lambda kind, payload: messages.append((kind, payload))).run()
    assert finished.status == "done", finished.error
    items = [item for k, p in messages if k == "plies" for item in p["items"] if item.get("eval")]
    boards = node_boards(stored)
    first = items[0]["eval"]
    board = boards[0]
    values = first["action_values"]
    assert set(values) == {m.uci() for m in board.legal_moves} and all(0 < v < 1 for v in values.values())
    expected = torch_evaluator.evaluate_actions([board])[0]
    assert values == pytest.approx({m.uci(): v for m, v in expected.items()}, abs=1e-5)
    assert {uci for uci, _, _ in first["policy"]} == set(values)
    assert first["score"] == pytest.approx(max(values.values()), abs=1e-5) and first["wdl"] is None
    # Phase 1 runs each position through the network once (its evaluate_actions reuses the pass);
    # then the value search asks once per position, and the check above once more.
    positions = len({n["key"] for n in stored})
    assert sum(forwards) == positions + positions + 1, forwards
    page = client.get(f"/jobs/{job.id}/").content.decode()
    assert "game.js" in page


def test_the_game_page_script_renders_win_probabilities():
    from tests.conftest import ROOT

    script = (ROOT / "static" / "sightline" / "game" / "position.js").read_text()
    assert "r.eval?.action_values" in script and "bar-win" in script
    assert ".bar-win" in (ROOT / "static" / "sightline" / "site.css").read_text()


def test_attention_maps_in_real_squares_on_the_site(cb_network, client, monkeypatch):
    job = create_job(parse_pgn(SHORT_GAME), cb_network, "policy", 1, dispatch=False)
    evaluator = ModelCache().get(cb_network)
    assert JobRun(job, evaluator, lambda kind, payload: None).run().status == "done"
    monkeypatch.setattr("workers.dispatch.send_task", lambda name, args, queue: None)
    url = f"/api/jobs/{job.id}/nodes/3/attention/?layer=1"
    assert client.get(url).status_code == 202
    assert tasks.compute_attention.run(str(job.id), 3) == "ready"
    body = client.get(url).json()
    assert body["layers"] == 2 and body["heads"] == 4
    maps = dequantise(base64.b64decode(body["maps"]), base64.b64decode(body["scales"]), body["heads"])
    board = node_boards(AnalysisJob.objects.get(pk=job.pk).nodes)[3]
    direct = evaluator.evaluate([board], attention=True)[0].attention[1]  # (H, 64, 64), real squares
    assert maps.shape == direct.shape
    # The 64 board tokens keep only part of each row's mass (BOS, side, castling ... take the rest).
    assert np.abs(maps - direct).max() < 0.02
