"""Lc0 networks on the site: a converted attention net (canonical input format) analyses a game in
the worker, keys its positions at creation, and serves its attention maps; the shipped Maia nets
register out of the box with their cards, and cf-small stays the default."""

import base64
import shutil

import numpy as np
import pytest

from analysis.evaluator import key_digest
from analysis.models.lc0.convert import convert
from tests.conftest import ROOT, require_shared_data
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
MAIAS = ("maia-1100", "maia-1500", "maia-1900")


@pytest.fixture
def bt_network(tmp_path):
    path = convert(require_shared_data("lc0/synthetic/synth_bt_dense_multihead.pb.gz"), tmp_path / "bt.safetensors")
    return register_checkpoint(path, "bt-test")


def test_an_attention_net_analyses_a_game_with_keys_set_at_creation(bt_network, client, monkeypatch):
    assert bt_network.family == "lc0-attention" and bt_network.caps.attention == (2, 2)
    job = create_job(parse_pgn(SHORT_GAME), bt_network, "mcts", 8, dispatch=False)
    stored = AnalysisJob.objects.get(pk=job.pk).nodes
    evaluator = ModelCache().get(bt_network)
    assert [n["key"] for n in stored] == [key_digest(evaluator.cache_key(b)) for b in node_boards(stored)]
    messages = []
    finished = JobRun(job, evaluator, lambda kind, payload: messages.append((kind, payload))).run()
    assert finished.status == "done", finished.error
    first = [item for k, p in messages if k == "plies" for item in p["items"]][0]["eval"]
    assert len(first["wdl"]) == 3 and abs(sum(p for _, p, _ in first["policy"]) - 1) < 1e-2
    queued = []
    monkeypatch.setattr("workers.dispatch.send_task", lambda name, args, queue: queued.append(args))
    url = f"/api/jobs/{job.id}/nodes/3/attention/?layer=1"
    assert client.get(url).status_code == 202
    assert tasks.compute_attention.run(str(job.id), 3) == "ready"
    body = client.get(url).json()
    assert body["layers"] == 2 and body["heads"] == 2
    maps = dequantise(base64.b64decode(body["maps"]), base64.b64decode(body["scales"]), body["heads"])
    assert np.allclose(maps.sum(axis=-1), 1.0, atol=0.05)


def test_the_shipped_maia_nets_register_with_their_cards_and_cf_small_stays_the_default(tmp_path):
    from webapp.networks.shipped import register_shipped

    weights = tmp_path / "weights"
    weights.mkdir()
    for name in ("cf-small", *MAIAS):
        shutil.copy(ROOT / "weights" / f"{name}.safetensors", weights)
    for card in [*MAIAS, "README"]:
        if (ROOT / "weights" / f"{card}.md").is_file():
            shutil.copy(ROOT / "weights" / f"{card}.md", weights)
    register_shipped(weights, tmp_path / "var")
    assert Network.objects.get(is_default=True).name == "cf-small"
    for name in MAIAS:
        network = Network.objects.get(name=name)
        rating = name.split("-")[1]
        assert network.family == "lc0-resnet" and network.trained and network.preset == "maia"
        assert network.card.startswith(f"# {name}") and rating in network.card
        for fact in ("McIlroy-Young", "CSSLab", "GPL-3.0", network.provenance["sha256"], "human moves",
                     "6 residual blocks"):
            assert fact in network.card, (name, fact)
        assert Network.objects.offered().filter(name=name).exists()


@pytest.mark.parametrize("name", MAIAS)
def test_each_maia_card_reports_every_figure_its_file_carries(name):
    from analysis.checkpoint import read_header

    path = ROOT / "weights" / f"{name}.safetensors"
    meta, _ = read_header(path)
    assert meta.trained and meta.family == "lc0-resnet" and path.stat().st_size < 5_000_000
    card = (ROOT / "weights" / f"{name}.md").read_text()
    assert meta.provenance["sha256"] in card and meta.provenance["storage"] in card
    for key, render in (("puzzles_policy", lambda m: f"{100 * m['accuracy']:.1f}% ({m['solved']}/{m['total']})"),
                        ("sts_policy", lambda m: f"{m['score']} / 15000"),
                        ("metrics_policy", lambda m: f"{100 * m['action_accuracy']:.1f}%"),
                        ("match_policy_vs_sf1350", lambda m: f"+{m['wins']} ={m['draws']} -{m['losses']}")):
        if key in meta.metrics:
            assert render(meta.metrics[key]) in card, (name, key)
        else:
            assert "not measured" in card, (name, key)
