"""An AlphaGateau network on the site: registered, analyses a game, and its job page tells the
explorer that its maps are sparse (the squares with no edge are zero by construction)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import numpy as np
import torch

from tests.conftest import ROOT, _missing


@pytest.fixture
def gateau_network(db, tmp_path):
    from analysis.checkpoint import save_checkpoint
    from analysis.models.alphagateau import PRESETS, build
    from webapp.networks.registry import register_checkpoint

    torch.manual_seed(0)
    path = save_checkpoint(tmp_path / "ag-tiny.safetensors", build(PRESETS["ag-tiny"]), trained=False,
                           provenance={"board_sizes": [8]})
    return register_checkpoint(path, "ag-tiny-test")


def test_an_alphagateau_network_registers_and_its_job_page_marks_sparse_maps(client, gateau_network):
    from webapp.jobs.gameinput import parse_pgn
    from webapp.jobs.jobs import create_job

    assert gateau_network.family == "alphagateau" and gateau_network.caps.attention == (2, 1)
    assert gateau_network.caps.attention_support == "moves"
    assert "board_sizes" in gateau_network.card  # the card says which boards it was trained on
    job = create_job(parse_pgn("1. e4 e5 2. Nf3 Nc6 *"), gateau_network, "policy", 1, dispatch=False)
    body = client.get(f"/jobs/{job.id}/").content.decode()
    page = json.loads(re.search(r'<script id="page-data" type="application/json">(.*?)</script>', body, re.S).group(1))
    assert page["network"]["attention_support"] == "moves" and page["network"]["attention"] == [2, 1]


def test_the_explorer_greys_exactly_the_squares_without_an_edge():
    from analysis.encoding.graph_geometry import board_graph

    node = shutil.which("node")
    if node is None:
        _missing("node is not installed (apt-get install nodejs)")
    graph = board_graph(8)
    expected = [[0] * 64 for _ in range(64)]
    for s, r in zip(graph.senders.tolist(), graph.receivers.tolist()):
        expected[r][s] = 1
    script = (f"import {{ movesApart }} from '{(ROOT / 'static/sightline/lens/explorer.js').as_uri()}';"
              "const m = []; for (let q = 0; q < 64; q++) { const row = [];"
              " for (let k = 0; k < 64; k++) row.push(movesApart(q, k) ? 1 : 0); m.push(row); }"
              "console.log(JSON.stringify(m));")
    out = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == expected  # the page's rule is the graph's edge set (white's frame)


def test_an_alphagateau_network_analyses_a_game_with_a_search_and_attention(gateau_network):
    from webapp.jobs.gameinput import parse_pgn
    from webapp.jobs.jobs import create_job
    from webapp.networks.model_cache import ModelCache
    from webapp.jobs.run.runner import JobRun

    job = create_job(parse_pgn("1. e4 e5 2. Nf3 Nc6 *"), gateau_network, "gumbel", 8, dispatch=False)
    messages = []
    finished = JobRun(job, ModelCache().get(gateau_network), lambda kind, payload: messages.append((kind, payload))).run()
    assert finished.status == "done", finished.error
    evals = [item for kind, p in messages if kind == "plies" for item in p["items"]]
    assert len(evals) == 5 and all(abs(sum(p for _, p, _ in e["eval"]["policy"]) - 1) < 1e-2 for e in evals)
    assert all(p["search"]["bestmove"] for kind, p in messages if kind == "ply")


def test_its_stored_attention_is_zero_off_the_edges(client, gateau_network):
    from analysis.encoding.graph_geometry import board_graph
    from webapp.jobs.attention_maps import dequantise, decode_layer
    from webapp.jobs.gameinput import parse_pgn
    from webapp.jobs.jobs import create_job
    from webapp.jobs.models import AttentionMap
    from webapp.lens.tasks import compute_attention

    job = create_job(parse_pgn("1. e4 e5 2. Nf3 *"), gateau_network, "policy", 1, dispatch=False)
    key = job.nodes[2]["key"]  # the position after 1. e4 e5
    AttentionMap.objects.create(position_key=key, network_checksum=gateau_network.checksum)  # as the view does
    compute_attention(str(job.id), 2)
    entry = AttentionMap.objects.get(network_checksum=gateau_network.checksum, position_key=key)
    assert entry.status == AttentionMap.Status.READY and (entry.layers, entry.heads) == (2, 1)
    maps = dequantise(*decode_layer(bytes(entry.data), 2, 1, 1), heads=1)[0]  # (64, 64), real squares
    support = np.zeros((64, 64), bool)
    graph = board_graph(8)
    support[graph.receivers, graph.senders] = True  # the 8x8 edge set is the same in both colours' frames
    assert (maps[~support] == 0).all() and np.allclose(maps.sum(-1), 1, atol=0.02)
