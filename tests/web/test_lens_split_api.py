"""The attention split through the API (issue 28 item 6): one layer's content, position and final
maps, computed by the lens task like the rest of the lens, checked before anything is queued."""

from __future__ import annotations

import base64

import chess
import numpy as np
import pytest
import torch

from tests.web.test_lens_api import GAME, job, sent  # noqa: F401 - fixtures: a cf-tiny job, the tasks sent
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.models import LensResult
from webapp.lens.tasks import compute_lens
from webapp.networks.model_cache import models


def split_url(job, node, query=""):
    return f"/api/jobs/{job.id}/nodes/{node}/lens/split/{query}"


def decode(body, part):
    raw = np.frombuffer(base64.b64decode(body[part]), dtype="<f2").astype(np.float32)
    return raw.reshape(body["heads"], 64, 64)


def test_the_split_is_pending_then_the_three_maps(client, job, sent, tiny_network):
    url = split_url(job, 1, "?layer=1")  # after 1. e4: Black to move
    assert client.get(url).status_code == 202 and len(sent) == 1
    (name, args), = sent
    assert name == "sightline.compute_lens" and compute_lens(*args) == "ready"
    body = client.get(url).json()
    assert body["request"] == {"quantity": "split", "layer": 1} and body["encoding"] == "f16"
    layers, heads = tiny_network.caps.attention
    assert body["heads"] == heads and body["layer"] == 1
    content, position, final = (decode(body, part) for part in ("content", "position", "final"))
    board = chess.Board()
    board.push_uci("e2e4")
    shown = models.get(tiny_network).evaluate([board], attention=True)[0].attention[1]  # what the explorer shows
    np.testing.assert_allclose(final, shown, atol=2e-3)
    again = torch.softmax(torch.from_numpy(np.log(content) + position), dim=-1).numpy()
    np.testing.assert_allclose(again, final, atol=2e-3)


@pytest.mark.parametrize("query,status,fragment", [("?layer=2", 422, "layer 2 is out of range"),
                                                   ("?layer=-1", 400, "layer must be 0 or more"),
                                                   ("?layer=x", 400, "layer must be a whole number")])
def test_an_unknown_layer_is_one_refusal_and_nothing_is_stored(client, job, sent, query, status, fragment):
    response = client.get(split_url(job, 0, query))
    assert response.status_code == status and fragment.lower() in response.json()["error"].lower(), response.json()
    assert LensResult.objects.count() == 0 and sent == []


def test_a_network_without_the_split_says_why(client, db, sent, tmp_path):
    from analysis.checkpoint import save_checkpoint
    from analysis.models import get_family
    from webapp.networks.registry import register_checkpoint

    family = get_family("chessformer")
    torch.manual_seed(1)
    model = family.build(family.config(dict(layers=1, embed=16, heads=2, ffn=16, position="absolute",
                                            value_channels=4, value_embed=8, reward_buckets=4)))
    save_checkpoint(tmp_path / "absolute.safetensors", model, trained=False, provenance={"source": "tests"})
    network = register_checkpoint(tmp_path / "absolute.safetensors", "cf-absolute-test")
    job = create_job(parse_pgn(GAME), network, "policy", 1, dispatch=False)
    response = client.get(split_url(job, 0))
    assert response.status_code == 422 and "absolute positions" in response.json()["error"]
    about = client.get(f"/api/jobs/{job.id}/nodes/0/lens/").json()
    assert "added to the tokens" in about["unavailable"]["split"]
    assert LensResult.objects.count() == 0 and sent == []
