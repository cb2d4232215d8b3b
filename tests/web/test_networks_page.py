"""Honest network choice: /networks/ lists every network with the figures its card carries, the home
dropdown shows each one's headline strength (a very weak one marked so), and the default network is
the one ``figures.DEFAULT_RULE`` picks from measured figures, as the README and docs/site.md say."""

from __future__ import annotations

import re
import shutil
from types import SimpleNamespace
from pathlib import Path

import pytest

from analysis.checkpoint import read_header
from tests.conftest import ROOT, weights_file
from webapp.networks.figures import default_rank, strength
from webapp.networks.models import Network
from webapp.networks.value_sanity import read_value_sanity

SHIPPED = {p.stem: p for p in sorted((ROOT / "weights").glob("*.safetensors"))}


def network_file(name: str) -> Path:
    """A shipped network's file, or a retired one's (cb-cpu: the very weak net these tests show)."""
    return SHIPPED.get(name) or weights_file(name)


def shipped_metrics(name: str) -> dict:
    return read_header(network_file(name))[0].metrics


def own_best(metrics: dict, prefix: str, value) -> float:
    return max(value(v) for k, v in metrics.items() if k.startswith(prefix) and not k.startswith("baseline"))


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_strength_is_the_best_own_figure_of_the_card(name):
    metrics = shipped_metrics(name)
    found = strength(metrics)
    if any(k.startswith("puzzles_") for k in metrics):
        assert found.puzzles.value == own_best(metrics, "puzzles_", lambda v: v["solved"] / v["total"])
    elo = [v["elo_diff"] for k, v in metrics.items() if k.startswith("match_") and v.get("b") == "stockfish-1350"]
    assert (found.elo.value if found.elo else None) == (max(elo) if elo else None)
    # The comparison rows a card quotes (material-greedy, cf-small on another split) are not this network's.
    assert "material" not in (found.elo.agent if found.elo else "") and "greedy" not in found.puzzles.agent


def test_only_the_networks_their_cards_call_very_weak_are_marked_so():
    """Every shipped network, and the retired cb-cpu, is very weak exactly where its card says so."""
    for name in [*SHIPPED, "cb-cpu"]:
        card = network_file(name).with_suffix(".md")
        said = card.is_file() and "very weak" in card.read_text().lower()
        assert strength(shipped_metrics(name)).very_weak == said, name
    assert strength(shipped_metrics("cb-cpu")).headline.startswith("VERY WEAK: ")
    assert "puzzles 0.0%" in strength(shipped_metrics("cb-cpu")).headline
    assert "puzzles 8.8%" in strength(shipped_metrics("cb-sv")).headline


def _shipped_stand_in(name: str) -> SimpleNamespace:
    metrics = shipped_metrics(name)
    return SimpleNamespace(name=name, metrics=metrics, trained=read_header(SHIPPED[name])[0].trained,
                           value_sanity=read_value_sanity(metrics))


def test_readme_and_site_doc_name_the_default_the_rule_picks():
    chosen = min((_shipped_stand_in(n) for n in SHIPPED), key=default_rank).name
    readme = (ROOT / "README.md").read_text()
    assert re.findall(r"\| `([\w-]+)` \(default\)", readme) == [chosen]
    site = (ROOT / "docs" / "site.md").read_text()
    assert f"`{chosen}`" in site and "default network" in site and "value sanity" in site


def test_the_rule_prefers_a_sane_value_then_elo_then_puzzles():
    def net(name, elo, puzzles, sane=True, trained=True):
        metrics = {"match_policy_vs_sf1350": {"a": name, "b": "stockfish-1350", "elo_diff": elo},
                   "puzzles_policy": {"solved": puzzles, "total": 1000, "agent": name}}
        return SimpleNamespace(name=name, metrics=metrics, trained=trained,
                               value_sanity=SimpleNamespace(state="passed" if sane else "failed"))

    nets = [net("a-weak", -800, 0), net("b-strong-insane", 100, 700, sane=False), net("c-good", -400, 150),
            net("d-tie-fewer-puzzles", -400, 100), net("e-untrained", 500, 900, trained=False)]
    assert [n.name for n in sorted(nets, key=default_rank)] == [
        "c-good", "d-tie-fewer-puzzles", "a-weak", "b-strong-insane", "e-untrained"]


@pytest.mark.django_db
def test_shipped_default_is_the_rules_not_the_alphabets(tmp_path):
    """cb-sv sorts first by name; the rule picks cf-small (sane value, better Elo; giraffe's value fails)."""
    from webapp.networks.shipped import register_shipped

    weights = tmp_path / "weights"
    weights.mkdir()
    for name in ("cb-sv", "cf-small", "giraffe"):
        shutil.copy(SHIPPED[name], weights)
        for card in (f"{name}.md", "README.md"):
            if (ROOT / "weights" / card).is_file():
                shutil.copy(ROOT / "weights" / card, weights)
    register_shipped(weights, tmp_path / "var")
    assert Network.objects.get(is_default=True).name == "cf-small"
    assert Network.objects.offered().first().name == "cf-small"  # the home form's initial choice


def shipped_rows(names) -> list[Network]:
    """Rows as registration makes them, from the files' headers (no model loaded: the pages read metadata)."""
    from analysis.checkpoint import file_sha256

    rows = []
    for name in names:
        path = network_file(name)
        meta = read_header(path)[0]
        rows.append(Network.objects.create(
            name=name, family=meta.family, checksum=file_sha256(path), trained=meta.trained,
            metrics=meta.metrics, card=path.with_suffix(".md").read_text(), parameters=1000,
            status=Network.Status.READY, capabilities={"policy": True, "value": True, "attention": [4, 4]},
            is_default=name == "ag-cpu"))
    return rows


@pytest.mark.django_db
def test_networks_page_names_every_network_with_its_figures(client, material_network):
    rows = shipped_rows(["ag-cpu", "cb-cpu", "giraffe"])
    Network.objects.create(name="refused-upload", family="chessformer", checksum="x" * 64,
                           status=Network.Status.REJECTED)
    response = client.get("/networks/")
    assert response.status_code == 200
    html = response.content.decode()
    for name in [n.name for n in Network.objects.all()]:
        assert f'id="net-{name}"' in html and f'href="/networks/{name}/"' in html
    for network in rows:
        found = network.strength
        row = html.split(f'id="net-{network.name}"')[1].split("</tr>")[0]
        for figure in (found.puzzles, found.sts, found.elo, found.value_quality):
            if figure is not None:
                assert figure.text.replace("'", "&#x27;") in row, (network.name, figure.text)
        assert ("very weak" in row) == found.very_weak
        assert f'href="/networks/{network.name}/heads/"' in row
    assert '<tr id="net-cb-cpu" class="very-weak">' in html and '<tr id="net-ag-cpu" class="">' in html
    assert "default</span>" in html.split('id="net-ag-cpu"')[1].split("</tr>")[0]
    assert "rejected" in html.split('id="net-refused-upload"')[1].split("</tr>")[0]


@pytest.mark.django_db
def test_home_dropdown_shows_each_networks_strength_and_marks_the_very_weak(client, material_network):
    shipped_rows(["ag-cpu", "cb-cpu"])
    html = client.get("/").content.decode()
    options = dict(re.findall(r'<option value="([\w-]+)" data-search[^>]*>([^<]*)</option>', html))
    assert strength(shipped_metrics("ag-cpu"), "policy").headline in options["ag-cpu"]
    assert "Elo about 980 (880-1090), puzzles 14.5% (raw policy, top move)" in options["ag-cpu"]
    assert "VERY WEAK" in options["cb-cpu"] and "VERY WEAK" not in options["ag-cpu"]
    assert "data-very-weak" in re.search(r'<option value="cb-cpu"[^>]*>', html).group(0)
    assert 'href="/networks/"' in html  # from the header and beside the dropdown


@pytest.mark.django_db
def test_the_panels_heads_row_names_the_value_head(client, material_network, tiny_network):
    """The graph plots the value: the Heads row says it has one (it said only "policy" before)."""
    for network in (material_network, tiny_network):
        html = client.get(f"/networks/{network.name}/").content.decode()
        heads = re.search(r'<dd id="heads-row">(.*?)</dd>', html, re.S).group(1)
        assert ("value" in heads) == network.caps.value and ("policy" in heads) == network.caps.policy
        assert ("(WDL)" in heads) == network.caps.wdl


@pytest.mark.django_db
def test_the_api_lists_the_networks_and_a_job_names_its_network(client, material_network, monkeypatch):
    from webapp.jobs.gameinput import parse_pgn
    from webapp.jobs.jobs import create_job

    rows = shipped_rows(["ag-cpu", "cb-cpu"])
    index = client.get("/api/").json()
    assert index["networks"].endswith("/api/networks/")
    listed = {n["name"]: n for n in client.get("/api/networks/").json()["networks"]}
    assert set(listed) == {"material", "ag-cpu", "cb-cpu"}
    for network in rows:
        entry, found = listed[network.name], network.strength
        assert entry["figures"]["puzzles"]["value"] == found.puzzles.value
        assert entry["figures"]["elo_vs_sf1350"]["text"] == found.elo.text
        assert entry["very_weak"] == found.very_weak and entry["default"] == network.is_default
        assert entry["page"].endswith(f"/networks/{network.name}/") and entry["offered"] is True
    assert listed["cb-cpu"]["very_weak"] and listed["material"]["figures"]["puzzles"] is None
    job = create_job(parse_pgn("1. e4 e5 *"), material_network, "value", 1, dispatch=False)
    body = client.get(f"/api/jobs/{job.id}/").json()
    assert body["network"]["name"] == "material" and body["network"]["page"].endswith("/networks/material/")
