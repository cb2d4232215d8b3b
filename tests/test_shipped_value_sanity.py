"""Every shipped network carries today's value sanity verdict, and the ones we train pass it.

The site reads ``metrics["value_sanity"]`` from the file to flag a network whose value fails the
suite (or was never checked). A stale or missing verdict would hide a failing value or flag a good
one, so the stored result must equal a fresh run of the suite on the file.

Networks trained here (``analysis train`` records its data in the provenance) must pass the suite:
issue 9's bar for shipping one. Imported networks (Lc0's) are judged the same way, and the site
flags them if they fail, but their training is not ours to fix.
"""

from __future__ import annotations

import pytest

from analysis.checkpoint import load_evaluator, read_header
from analysis.eval.value_sanity import SUITE_VERSION, run_sanity
from tests.conftest import shipped_networks

SHIPPED = shipped_networks()


def test_there_are_shipped_networks():
    assert SHIPPED, "no weights/*.safetensors"


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_network_stores_todays_value_sanity_verdict(path):
    stored = read_header(path)[0].metrics.get("value_sanity")
    assert stored is not None, f"{path.name} has no value_sanity verdict: run value-sanity --json, then attach-metrics"
    assert stored["suite_version"] == SUITE_VERSION
    fresh = run_sanity(load_evaluator(path, device="cpu"))
    assert stored == fresh, (f"{path.name}: the value_sanity stored in its metadata is not today's result; "
                             f"rerun value-sanity --json and attach-metrics --result value_sanity=FILE")


TRAINED_HERE = [p for p in SHIPPED if "data" in read_header(p)[0].provenance]


def test_some_shipped_network_was_trained_here():
    assert TRAINED_HERE, "no shipped network records `analysis train` data in its provenance"


@pytest.mark.parametrize("path", TRAINED_HERE, ids=[p.stem for p in TRAINED_HERE])
def test_networks_trained_here_pass_the_value_sanity_suite(path):
    result = run_sanity(load_evaluator(path, device="cpu"))
    failed = [f"{c['name']}: {c['detail']}" for c in result["checks"] if not c["passed"]]
    assert result["passed"], f"{path.name} fails the value sanity suite: " + "; ".join(failed)
