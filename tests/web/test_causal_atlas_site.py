"""The causal atlas on the head atlas page (issue 28 item 8): the atlas job also removes each head
on the same sample positions and stores its mean policy KL and |score change| with the labels."""

from __future__ import annotations

import re

import numpy as np
import pytest
from django.core.management import call_command

from analysis.checkpoint import load_evaluator
from analysis.heads.sample import load_sample
from analysis.lens import lens_for
from analysis.lens.atlas import causal_atlas
from webapp.networks.models import HeadAtlas


@pytest.fixture
def atlas_network(tiny_network):
    call_command("head_atlas", tiny_network.name, "--positions", "8", stdout=open("/dev/null", "w"))
    return tiny_network


def test_the_atlas_job_stores_each_heads_measured_importance(atlas_network):
    stored = HeadAtlas.objects.get(network=atlas_network).data["importance"]
    evaluator = load_evaluator(atlas_network.path, "cpu")
    expected = causal_atlas(lens_for(evaluator.model, evaluator.encoding), load_sample(8))
    assert stored["positions"] == expected.positions == 8
    assert np.allclose(stored["kl"], expected.kl, atol=1e-6) and np.allclose(stored["score"], expected.score, atol=1e-6)
    assert np.array(stored["kl"]).shape == (2, 4) and np.array(stored["kl"]).max() > 0


def test_the_atlas_page_shows_label_and_importance_sortable(client, atlas_network):
    stored = HeadAtlas.objects.get(network=atlas_network).data["importance"]
    page = client.get(f"/networks/{atlas_network.name}/heads/").content.decode()
    rows = re.findall(r'<tr data-order="(\d)\.(\d+)" data-label="([^"]+)"\s+data-kl="([^"]*)" data-dscore="([^"]*)">', page)
    assert len(rows) == 8 and 'id="importance-sort"' in page
    for layer, head, label, kl, dscore in rows:
        assert float(kl) == pytest.approx(stored["kl"][int(layer)][int(head)])
        assert float(dscore) == pytest.approx(stored["score"][int(layer)][int(head)])
    assert "policy KL" in page and page.count('class="atlas-effect small"') == 8


def test_an_atlas_from_before_the_causal_atlas_says_to_compute_it_again(client, atlas_network):
    row = HeadAtlas.objects.get(network=atlas_network)
    HeadAtlas.objects.filter(pk=row.pk).update(data={k: v for k, v in row.data.items() if k != "importance"})
    page = client.get(f"/networks/{atlas_network.name}/heads/").content.decode()
    assert 'id="no-importance"' in page and "compute it again" in page and "importance-table" not in page


def test_the_atlas_page_counts_layers_and_heads_from_0_as_the_lens_and_explorer(client, atlas_network):
    """One numbering (issue 37): each cell's label, tooltip and table row name the layer and head its
    form sends to the explorer (``value="L.H"``, ``?layer=L&head=H``), all from 0."""
    page = client.get(f"/networks/{atlas_network.name}/heads/").content.decode()
    assert re.findall(r'<div class="atlas-layer">L(\d+)</div>', page) == ["0", "1"]
    cells = re.findall(r'value="(\d+)\.(\d+)"[^>]*\n?[^>]*title="layer (\d+) head (\d+):', page)
    assert len(cells) == 8 and all((a, b) == (c, d) for a, b, c, d in cells), cells
    assert sorted(re.findall(r"<td>L(\d) H(\d)</td>", page)) == [(str(l), str(h)) for l in range(2) for h in range(4)]
