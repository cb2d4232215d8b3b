"""Every shipped network passes the value sanity suite, and its card's stored result is today's."""

from __future__ import annotations

import pytest

from analysis.checkpoint import load_evaluator, read_header
from analysis.eval.value_sanity import run_sanity
from tests.conftest import ROOT

SHIPPED = sorted((ROOT / "weights").glob("*.safetensors"))


def test_there_are_shipped_networks():
    assert SHIPPED, "no weights/*.safetensors"


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_network_passes_value_sanity_and_stores_the_result(path):
    fresh = run_sanity(load_evaluator(path, device="cpu"))
    failed = [f"{c['name']}: {c['detail']}" for c in fresh["checks"] if not c["passed"]]
    assert fresh["passed"], f"{path.name} fails the value sanity suite:\n" + "\n".join(failed)
    stored = read_header(path)[0].metrics.get("value_sanity")
    assert stored == fresh, (f"{path.name}: the value_sanity stored in its metadata is not today's result; "
                             f"rerun value-sanity --json and attach-metrics --result value_sanity=FILE")
