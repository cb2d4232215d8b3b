"""The shipped ChessBench network says how it was trained and carries what its card reports.

The card (``weights/NAME.md``) is written by hand from the attached results; this keeps the two
from drifting apart and holds the file to the issue's measuring rules: the action-value head, the
1,000 puzzles, the full STS suite, 100 games against Stockfish, and the comparison rows
(material-greedy, cf-small's policy agent) measured on the same test split as the network.
"""

from __future__ import annotations

import pytest

from analysis.checkpoint import read_header
from analysis.models.chessbench.config import ACTION_VALUE
from tests.conftest import shipped_networks

CHESSBENCH = shipped_networks("chessbench")
SAME_SPLIT = ("metrics_value", "baseline_metrics", "reference_cf_small_metrics_policy")


def test_a_trained_chessbench_network_ships():
    assert CHESSBENCH, "no ChessBench network in weights/"


@pytest.mark.parametrize("path", CHESSBENCH, ids=[p.stem for p in CHESSBENCH])
def test_chessbench_provenance(path):
    meta = read_header(path)[0]
    assert meta.trained and path.stat().st_size < 5_000_000
    assert meta.config["head"] == ACTION_VALUE
    assert meta.provenance["data"] and meta.provenance["steps"] > 0


@pytest.mark.parametrize("path", CHESSBENCH, ids=[p.stem for p in CHESSBENCH])
def test_chessbench_measured_by_the_issues_rules(path):
    m = read_header(path)[0].metrics
    assert m["puzzles_value"]["total"] == 1000
    assert m["sts_value"]["maximum"] == 15000
    assert m["match_value_vs_sf1350"]["games"] == 100
    positions = {m[name]["positions"] for name in SAME_SPLIT}
    assert len(positions) == 1 and positions.pop() > 1000, "the metrics rows must share one test split"


@pytest.mark.parametrize("path", CHESSBENCH, ids=[p.stem for p in CHESSBENCH])
def test_chessbench_card_reports_the_attached_figures(path):
    m, card = read_header(path)[0].metrics, path.with_suffix(".md").read_text()
    puzzles, sts, match = m["puzzles_value"], m["sts_value"], m["match_value_vs_sf1350"]
    assert f"{100 * puzzles['accuracy']:.1f}%" in card and f"{sts['score']:,}" in card
    assert f"+{match['wins']} ={match['draws']} -{match['losses']}" in card
    for name in SAME_SPLIT:
        assert f"{100 * m[name]['action_accuracy']:.1f}%" in card, name
        assert f"{m[name]['kendall_tau']:.3f}" in card, name
    sanity = m["value_sanity"]
    passed = sum(c["passed"] for c in sanity["checks"])
    assert f"{passed}/{len(sanity['checks'])}" in card
