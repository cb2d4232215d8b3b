"""The networks page's "Good for" column speaks to a user (issue 37): each card's "Good for:" line,
and for a card without one its lead with no repository paths or links to the repository's files."""

from __future__ import annotations

import re

import pytest

from tests.web.test_networks_page import shipped_rows
from webapp.networks.figures import good_for

CARDS = ["ag-cpu", "cb-sv", "cf-corpus", "cf-shaw", "giraffe", "maia-1100", "maia-1500", "maia-1900"]
REPOSITORY_WORDS = re.compile(r"\.\./|shared/|\.md\b|`|docs/|weights/|configs/|\.toml|\.safetensors")


@pytest.mark.django_db
def test_every_shipped_network_says_what_it_is_good_for_without_paths(client, material_network):
    rows = shipped_rows(CARDS)
    page = client.get("/networks/").content.decode()
    for network in rows:
        cell = page.split(f'id="net-{network.name}"')[1].split('class="lead">')[1].split("</td>")[0]
        assert cell.strip(), network.name
        assert not REPOSITORY_WORDS.search(cell), f"{network.name}: {cell}"
        assert "Good for" not in cell and network.card.split("Good for: ")[1].split(" ")[0] in cell


def test_a_card_without_the_line_gives_its_lead_without_repository_paths():
    card = ("# net\n\n**A network** (Someone, `../shared/papers/`): the best variant of the ablation "
            "([docs/ablations.md](../docs/ablations.md)), see [the paper](https://example.org/p).\n\n- Status: x\n")
    assert good_for(card, "net") == ("**A network** (Someone): the best variant of the ablation, "
                                     "see [the paper](https://example.org/p).")
    assert good_for("# n\n\nThe [ablation](../docs/ablations.md) winner.\n", "n") == "The ablation winner."


def test_the_line_is_read_within_the_networks_own_section():
    card = "# Weights\n\n## one.safetensors: x\n\nGood for: the first.\n\n## two.safetensors: y\n\nGood for: the second.\n"
    assert good_for(card, "two") == "the second." and good_for(card, "one") == "the first."
