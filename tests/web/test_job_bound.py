"""The form keeps one job within MAX_JOB_NODES (positions x nodes per position) and says so."""

from __future__ import annotations

import pytest

from webapp.jobs.models import AnalysisJob
from webapp.jobs.searches import MAX_JOB_NODES, SEARCHES, job_nodes

pytestmark = pytest.mark.django_db

# 60 plies (61 positions): knights out and back.
SHUFFLE = " ".join(f"{2 * i + 1}. Nf3 Nf6 {2 * i + 2}. Ng1 Ng8" for i in range(15)) + " *"


def post(client, network, **data):
    return client.post("/", {"network": network.name, **data})


def test_a_job_over_the_bound_is_refused_with_the_bound_in_the_message(client, tiny_network):
    response = post(client, tiny_network, pgn=SHUFFLE, search="mcts", budget="20000")
    assert response.status_code == 400
    text = response.content.decode()
    assert "about 1,220,000 nodes (61 positions x 20,000)" in text and f"at most {MAX_JOB_NODES:,}" in text
    assert AnalysisJob.objects.count() == 0


def test_deep_alpha_beta_counts_its_growth(client, tiny_network):
    response = post(client, tiny_network, fen="8/8/8/4k3/8/8/4K3/4R3 w - - 0 1", search="alphabeta", budget="6")
    assert response.status_code == 400 and "2,500,000 nodes" in response.content.decode()
    assert job_nodes(SEARCHES["alphabeta"], 2, 1000) < MAX_JOB_NODES  # the default depth fits any game


def test_a_job_within_the_bound_is_accepted(client, tiny_network):
    response = post(client, tiny_network, pgn=SHUFFLE, search="mcts", budget="16000")
    assert response.status_code == 302, response.content[:500]
    assert AnalysisJob.objects.get().budget == 16000
