"""The site's form offers whatever the search catalogue holds: a toy search registered once is in
the home page's list with its budget range, and the form checks a budget against that range."""

from __future__ import annotations

import pytest

from tests.test_search_catalogue import TOY, toy  # noqa: F401  (the fixture)
from webapp.jobs.models import AnalysisJob

pytestmark = pytest.mark.django_db


def test_the_home_page_offers_the_toy_with_its_budget_range(client, material_network, toy):  # noqa: F811
    body = client.get("/").content.decode()
    assert f'value="{TOY.name}" data-unit="nodes" data-min="1"' in body
    assert f'data-max="{TOY.budget_max}" data-default="{TOY.budget_default}"' in body and TOY.label in body


def test_the_form_holds_the_toy_to_its_budget_range(client, material_network, toy):  # noqa: F811
    response = client.post("/", {"network": "material", "search": "toy", "budget": "51",
                                 "fen": "8/8/8/4k3/8/8/4K3/4R3 w - - 0 1"})
    assert response.status_code == 400
    assert "Budget 51 is out of range for toy: 1 to 50 nodes." in response.content.decode()
    assert AnalysisJob.objects.count() == 0
