"""The shipped AlphaGateau networks: an 8x8 one, and the 5x5 Gardner one it was fine-tuned from.

The cards (``weights/NAME.md``, ``weights/gardner/NAME.md``) are written by hand from the attached
results; this keeps the two from drifting apart and holds the files to the issue's measuring rules:
the 8x8 net's policy agent on the 1,000 puzzles, the full STS suite and 100 games against Stockfish,
its comparison rows on one test split, and the Gardner net's games on its own board. The site serves
8x8 networks only, so the Gardner net lives in ``weights/gardner/``, out of ``weights/*.safetensors``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.checkpoint import load_evaluator, read_header
from analysis.gardner import GardnerBoard
from tests.conftest import ROOT, shipped_networks
from tests.shipped_cards import assert_card_reports_the_attached_figures, assert_measured_by_the_issues_rules

EIGHT = shipped_networks("alphagateau")
GARDNER = sorted((ROOT / "weights" / "gardner").glob("*.safetensors"))
SAME_SPLIT = ("metrics_policy", "baseline_metrics", "reference_cf_small_metrics_policy")


def _gardner_origin(path: Path) -> Path:
    """The shipped Gardner file whose self-play record the 8x8 net's ``init_from`` chain (its
    stages, back to the first) carries."""
    init = read_header(path)[0].provenance["init_from"]
    while "selfplay" not in init:
        init = init["init_from"]
    matches = [g for g in GARDNER if read_header(g)[0].provenance.get("selfplay") == init["selfplay"]]
    assert len(matches) == 1, f"{path.name}: its Gardner origin is not (once) in weights/gardner/"
    return matches[0]


def test_a_trained_8x8_network_and_its_gardner_origin_ship():
    assert EIGHT, "no AlphaGateau network in weights/"
    assert GARDNER, "no Gardner network in weights/gardner/"


@pytest.mark.parametrize("path", EIGHT, ids=[p.stem for p in EIGHT])
def test_8x8_provenance_names_both_boards_and_its_origin(path):
    meta = read_header(path)[0]
    assert meta.trained and path.stat().st_size < 5_000_000
    assert meta.config["board"] == 8 and meta.provenance["board_sizes"] == [5, 8]
    assert meta.provenance["data"] and meta.provenance["steps"] > 0
    origin = read_header(_gardner_origin(path))[0]
    assert origin.config == {**meta.config, "board": 5}  # the same network, on the other board


@pytest.mark.parametrize("path", GARDNER, ids=[p.stem for p in GARDNER])
def test_gardner_network_is_a_5x5_self_play_network(path):
    meta = read_header(path)[0]
    assert meta.trained and meta.config["board"] == 5 and path.stat().st_size < 5_000_000
    assert meta.provenance["selfplay"]["games"] > 0
    result = load_evaluator(path, device="cpu").evaluate([GardnerBoard()])[0]
    assert abs(sum(result.policy.values()) - 1) < 1e-4  # it plays its own board


@pytest.mark.parametrize("path", EIGHT, ids=[p.stem for p in EIGHT])
def test_8x8_measured_by_the_issues_rules(path):
    assert_measured_by_the_issues_rules(path, "policy", SAME_SPLIT)


@pytest.mark.parametrize("path", EIGHT, ids=[p.stem for p in EIGHT])
def test_8x8_card_reports_the_attached_figures(path):
    assert_card_reports_the_attached_figures(path, "policy", SAME_SPLIT)


@pytest.mark.parametrize("path", GARDNER, ids=[p.stem for p in GARDNER])
def test_gardner_card_reports_its_games(path):
    m, card = read_header(path)[0].metrics, path.with_suffix(".md").read_text()
    for name in ("match_vs_material_greedy", "untrained_match_vs_material_greedy"):
        match = m[name]
        assert match["games"] == 100
        assert f"+{match['wins']} ={match['draws']} -{match['losses']}" in card, name
