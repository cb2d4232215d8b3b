"""Strength in a player's words where a network is picked (issue 37, item 4): Elo on one scale (Stockfish's,
1350 + the measured difference) with its 95% interval from the stored matches, puzzles by one agent for
every network (named), and the home picker grouped: plays like a human of a rating, strongest here, for
taking apart, then the rest and the ablations' variants."""

from __future__ import annotations

import json
import logging
import re

import pytest

from analysis.checkpoint import file_sha256, read_header
from analysis.models import get_family
from tests.conftest import ROOT
from webapp.networks import one_agent, picker
from webapp.networks.figures import PUZZLE_AGENTS, STOCKFISH_ELO, rating, strength
from webapp.networks.models import Network

SHIPPED = {p.stem: p for p in sorted((ROOT / "weights").glob("*.safetensors"))}
MEASURED = json.loads((ROOT / "weights" / one_agent.FILE_NAME).read_text())["networks"]


def _caps(path):
    meta = read_header(path)[0]
    family = get_family(meta.family)
    return family.capabilities(family.config(meta.config))


def _sf1350_matches(metrics: dict) -> list[dict]:
    return [v for k, v in metrics.items() if k.startswith("match_") and v.get("b") == "stockfish-1350"]


def test_rating_is_1350_plus_the_difference_with_the_elo_fits_interval():
    assert rating(0, 11, 89).text == "about 870 (730-1010)"  # cf-shaw's match: "Elo -480 vs SF 1350" before
    even = rating(40, 20, 40)
    assert even.value == pytest.approx(STOCKFISH_ELO) and even.high - STOCKFISH_ELO == pytest.approx(
        STOCKFISH_ELO - even.low)
    assert rating(60, 20, 20).low > STOCKFISH_ELO  # a clear win is above the opponent, interval and all
    assert rating(0, 0, 1000).high - rating(0, 0, 1000).low < rating(0, 0, 100).high - rating(0, 0, 100).low


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_every_cards_match_converts_to_its_difference_and_interval(name):
    """The fit from W/D/L gives back the card's own difference and 95% interval, moved by 1350."""
    metrics = read_header(SHIPPED[name])[0].metrics
    best = max(_sf1350_matches(metrics), key=lambda m: m["elo_diff"])
    found = strength(metrics).rating
    assert found.value == pytest.approx(STOCKFISH_ELO + best["elo_diff"], abs=0.1)
    assert (found.low, found.high) == pytest.approx([STOCKFISH_ELO + x for x in best["ci95"]], abs=0.1)


def test_a_match_without_its_record_has_no_interval_and_bad_counts_are_not_used():
    entry = {"a": "x:policy", "b": "stockfish-1350", "elo_diff": -480.0}
    assert strength({"match_policy_vs_sf1350": entry}).rating.text == "about 870"
    for bad in ({"wins": -1, "draws": 11, "losses": 90}, {"wins": "0", "draws": 11, "losses": 89},
                {"wins": 0, "draws": 0, "losses": 0}):
        assert strength({"match_policy_vs_sf1350": {**entry, **bad}}).rating.low is None
    assert "vs SF 1350" not in strength({"match_policy_vs_sf1350": {**entry, "wins": 0, "draws": 11,
                                                                      "losses": 89}}).headline


def _one_agents_result(name: str) -> tuple[str, dict]:
    """(agent, the CLI's result) the site shows for a shipped network: the measured file's, else its card's."""
    path = SHIPPED[name]
    agent = "policy" if _caps(path).policy else "value"
    metrics = one_agent.with_one_agent(read_header(path)[0].metrics, file_sha256(path), ROOT / "weights")
    return agent, metrics[f"puzzles_{agent}"]


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_each_shipped_network_is_measured_by_the_same_agent(name):
    """The raw policy's top move, or the value one ply ahead where there is no policy head, on all 1,000
    puzzles; a figure in the measured file is of the file shipped now (its SHA-256) and, where the card
    has the same agent's figure, agrees with it."""
    agent, result = _one_agents_result(name)
    assert result["agent"].endswith(f":{agent}") and result["total"] == 1000
    assert result["solved"] == sum(b["solved"] for b in result["buckets"].values())
    if name in MEASURED:
        assert MEASURED[name]["sha256"] == file_sha256(SHIPPED[name]) and MEASURED[name]["agent"] == agent
        card = read_header(SHIPPED[name])[0].metrics.get(f"puzzles_{agent}")
        assert card is None or card["solved"] == result["solved"]


def test_the_one_agents_figure_is_named_and_a_missing_one_is_none():
    metrics = {"puzzles_policy": {"agent": "n:policy", "solved": 120, "total": 1000},
               "puzzles_mcts200": {"agent": "n:mcts:200", "solved": 700, "total": 1000}}
    found = strength(metrics, "policy")
    assert (found.one_agent.value, found.one_agent.agent) == (0.12, PUZZLE_AGENTS["policy"])
    assert found.puzzles.value == 0.7  # the best agent stays the best agent's
    assert "puzzles 12.0% (raw policy, top move)" in found.headline
    assert strength(metrics, "value").one_agent is None and strength(metrics, "nonsense").one_agent is None


def test_a_broken_measurements_file_leaves_the_cards_figures(tmp_path, caplog):
    path = tmp_path / one_agent.FILE_NAME
    path.write_text("{not json")
    with caplog.at_level(logging.WARNING):
        assert one_agent.measured(tmp_path) == {}
    assert "cannot be read" in caplog.text
    path.write_text(json.dumps({"networks": {"a": {"sha256": "1" * 64, "agent": "mcts", "result": {}},
                                             "b": {"sha256": "2" * 64, "agent": "value", "result": {"solved": 1}}}}))
    assert list(one_agent.measured(tmp_path)) == ["2" * 64]
    assert one_agent.with_one_agent({"x": 1}, "3" * 64, tmp_path) == {"x": 1}


def shipped_networks() -> list[Network]:
    """Every shipped network as registration makes its row (real capabilities and card), without loading it."""
    from webapp.networks.shipped import _card_for

    rows = []
    for name, path in SHIPPED.items():
        meta = read_header(path)[0]
        rows.append(Network.objects.create(
            name=name, family=meta.family, checksum=file_sha256(path), trained=meta.trained, metrics=meta.metrics,
            card=_card_for(path), parameters=1000, status=Network.Status.READY,
            capabilities=_caps(path).to_dict(), is_default=name == "cf-small"))
    return rows


def _picker(html: str) -> list[tuple[str, list[tuple[str, str]]]]:
    select = html[html.index('id="id_network"'):html.index("</select>")]
    return [(label, re.findall(r'<option value="([\w-]+)"[^>]*>([^<]*)</option>', body))
            for label, body in re.findall(r'<optgroup label="([^"]+)">(.*?)</optgroup>', select, re.S)]


@pytest.mark.django_db
def test_home_picker_shows_one_agents_puzzles_for_every_shipped_network(client, material_network, settings):
    settings.SIGHTLINE_WEIGHTS_DIR = ROOT / "weights"
    shipped_networks()
    options = dict(o for _, group in _picker(client.get("/").content.decode()) for o in group)
    shown = {name: _one_agents_result(name) for name in SHIPPED}
    for name, (agent, result) in shown.items():
        share = 100 * result["solved"] / result["total"]
        assert f"puzzles {share:.1f}% ({PUZZLE_AGENTS[agent]})" in options[name], options[name]
        assert re.search(r"Elo about \d+ \(\d+-\d+\)", options[name]) and "vs SF" not in options[name]
    page = client.get("/networks/").content.decode()
    for name, (agent, result) in shown.items():  # the networks page: the same agent's figure, named, first
        cell = page.split(f'id="net-{name}"')[1].split('data-label="Puzzles"')[1].split("</td>")[0]
        assert re.search(rf'class="fig"><span class="one-agent">{100 * result["solved"] / result["total"]:.1f}% '
                         rf'\({result["solved"]:,} of 1,000\)</span><br><span class="muted small">'
                         rf'{re.escape(PUZZLE_AGENTS[agent])}</span>', cell), (name, cell)
    html = client.get("/").content.decode()
    assert "on Stockfish's scale (roughly CCRL's, not Lichess's)" in html  # what the scale is, beside the picker
    assert 'title="Elo on Stockfish&#x27;s UCI_Elo scale' in html


@pytest.mark.django_db
def test_home_picker_groups_in_a_players_words(client, material_network, settings):
    settings.SIGHTLINE_WEIGHTS_DIR = ROOT / "weights"
    rows = {n.name: n for n in shipped_networks()}
    groups = dict(_picker(client.get("/").content.decode()))
    assert list(groups) == [picker.HUMAN, picker.STRONGEST, picker.TAKING_APART, picker.OTHERS]
    human = groups[picker.HUMAN]
    assert [n for n, _ in human] == ["maia-1900", "maia-1500", "maia-1100"]  # strongest first
    assert "plays like a Lichess player rated 1100-1199" in dict(human)["maia-1100"]
    strongest = [n for n, _ in groups[picker.STRONGEST]]
    ratings = {n: rows[n].strength.rating for n in rows}
    assert strongest and strongest == sorted(strongest, key=lambda n: -ratings[n].value)
    rest = sorted((n for n in rows if n not in strongest and not n.startswith("maia")), key=lambda n: -ratings[n].value)
    assert all(ratings[n].high >= ratings[strongest[0]].low for n in strongest)
    assert all(ratings[n].high < ratings[strongest[0]].low for n in rest)  # the matches tell them apart
    apart = groups[picker.TAKING_APART]
    assert [n for n, _ in apart] == [n for n in rest if rows[n].caps.attention]
    assert all(re.search(r"\d+ layers x \d+ heads$", label) for _, label in apart)
    assert [n for n, _ in groups[picker.OTHERS]] == ["material"]
    assert sorted(n for g in groups.values() for n, _ in g) == sorted([*rows, "material"])  # each once


def test_the_human_band_is_read_from_the_card():
    assert picker.human_band("- Rating band: trained on Lichess games between players rated 1500-1599 (the") \
        == picker.HumanBand("Lichess", 1500, 1599)
    assert picker.human_band("A network trained on Stockfish labels.") is None
