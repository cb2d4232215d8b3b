"""The shipped ChessBench network says how it was trained and carries what its card reports.

The card (``weights/NAME.md``) is written by hand from the attached results; this keeps the two
from drifting apart and holds the file to the issue's measuring rules: the action-value head, the
1,000 puzzles, the full STS suite, 100 games against Stockfish, and the comparison rows
(material-greedy, cf-small's policy agent) measured on the same test split as the network.
"""

from __future__ import annotations

import pytest

from analysis.checkpoint import read_header
from analysis.models.chessbench.config import ACTION_VALUE, STATE_VALUE
from tests.conftest import shipped_networks
from tests.shipped_cards import assert_card_reports_the_attached_figures, assert_measured_by_the_issues_rules

CHESSBENCH = shipped_networks("chessbench")
SAME_SPLIT = ("metrics_value", "baseline_metrics", "reference_cf_small_metrics_policy")


def test_a_trained_chessbench_network_ships():
    assert CHESSBENCH, "no ChessBench network in weights/"


@pytest.mark.parametrize("path", CHESSBENCH, ids=[p.stem for p in CHESSBENCH])
def test_chessbench_provenance(path):
    meta = read_header(path)[0]
    assert meta.trained and path.stat().st_size < 5_000_000
    assert meta.config["head"] in (ACTION_VALUE, STATE_VALUE)  # the card's agent plays by value
    assert meta.provenance["data"] and meta.provenance["steps"] > 0


@pytest.mark.parametrize("path", CHESSBENCH, ids=[p.stem for p in CHESSBENCH])
def test_chessbench_measured_by_the_issues_rules(path):
    assert_measured_by_the_issues_rules(path, "value", SAME_SPLIT)


@pytest.mark.parametrize("path", CHESSBENCH, ids=[p.stem for p in CHESSBENCH])
def test_chessbench_card_reports_the_attached_figures(path):
    assert_card_reports_the_attached_figures(path, "value", SAME_SPLIT)
