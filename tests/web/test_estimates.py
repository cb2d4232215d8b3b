"""The cost estimate on the home form and the job page: from this site's measured compute times."""

import pytest

from webapp.jobs.run.engine_lane import engine_checksum
from webapp.jobs.estimates import engine_estimate, estimate
from webapp.jobs.models import PositionResult

pytestmark = pytest.mark.django_db


def stored(network, settings_key, *ms):
    for i, value in enumerate(ms):
        PositionResult.objects.create(position_key=f"{settings_key}-{i}", network_checksum=network.checksum,
                                      settings_key=settings_key, data={}, compute_ms=value)


def test_nothing_measured_says_so():
    from webapp.networks.models import Network

    network = Network.objects.create(name="never-timed", family="chessformer", checksum="n" * 64)
    found = estimate(network, "mcts", 200)
    assert found.seconds_per_position is None and "no measurement yet for never-timed" in found.basis


def test_a_new_site_still_estimates_from_the_registration_timing(tiny_network, material_network):
    """No analysis has run yet: the forward pass timed when the network was registered (the material
    count: timed on the spot) gives a rough figure instead of "no measurement yet"."""
    timed = tiny_network.metrics["site_forward_ms"]
    found = estimate(tiny_network, "mcts", 200)
    assert found.seconds_per_position == pytest.approx(timed["ms_per_position"] * 200 / 1000)
    assert found.basis.startswith("rough") and "registered" in found.basis
    material = estimate(material_network, "value", 1)
    assert material.seconds_per_position is not None and material.seconds_per_position > 0


def test_measured_at_this_budget_is_the_median(material_network):
    stored(material_network, "mcts:200", 3000.0, 3400.0, 9000.0)
    stored(material_network, "mcts:50", 10.0)  # other budgets do not count when this one is measured
    found = estimate(material_network, "mcts", 200)
    assert found.seconds_per_position == pytest.approx(3.4) and "median of 3 searches" in found.basis


def test_other_budgets_scale_by_nodes(material_network):
    stored(material_network, "mcts:100", 1000.0, 1200.0)  # 10 and 12 ms a node
    found = estimate(material_network, "mcts", 400)
    assert found.seconds_per_position == pytest.approx(0.011 * 400) and "other budgets" in found.basis


def test_the_forward_pass_is_the_rough_fallback(material_network):
    stored(material_network, "eval", 2.0, 2.0, 4.0)
    found = estimate(material_network, "alphabeta", 2)  # 250 nodes at depth 2
    assert found.seconds_per_position == pytest.approx(0.002 * 250) and found.basis.startswith("rough")


def engine_values(name, settings_key, *ms):
    for i, value in enumerate(ms):
        PositionResult.objects.create(position_key=f"{name}-{settings_key}-{i}", network_checksum=engine_checksum(name),
                                      settings_key=settings_key, data={}, compute_ms=value)


def test_stockfishs_share_is_measured_like_the_networks(material_network):
    assert engine_estimate(0) is None  # the engine lane is off
    untimed = engine_estimate(100_000)
    assert untimed.seconds_per_position is None and "not timed" in untimed.basis
    stored(material_network, "nodes:100000", 9999.0)  # a network's row under the same key is not the engine's
    assert engine_estimate(100_000).seconds_per_position is None
    engine_values("Stockfish 15.1", "nodes:100000", 300.0, 500.0, 400.0)
    engine_values("Stockfish 16", "nodes:20000", 50.0)  # another budget does not count when this one is timed
    exact = engine_estimate(100_000)
    assert exact.seconds_per_position == pytest.approx(0.4) and "median of 3 engine values" in exact.basis
    scaled = engine_estimate(50_000)  # 2.5, 3, 4 and 5 us a node: the median 3.5 us
    assert scaled.seconds_per_position == pytest.approx(0.175) and "other budgets" in scaled.basis


def test_endpoint(client, material_network):
    stored(material_network, "value:1", 40.0)
    engine_values("Stockfish 15.1", "nodes:1000", 20.0)
    ok = client.get("/estimate/", {"network": "material", "search": "value", "budget": ""})
    assert ok.status_code == 200 and ok.json()["seconds_per_position"] == pytest.approx(0.04)
    assert ok.json()["engine"]["basis"]  # blank: the site's default budget, not timed here
    with_engine = client.get("/estimate/", {"network": "material", "search": "value", "engine_nodes": "1000"}).json()
    assert with_engine["engine"]["seconds_per_position"] == pytest.approx(0.02)
    assert client.get("/estimate/", {"network": "material", "search": "value", "engine_nodes": "0"}).json()["engine"] is None
    for params, words in [({"network": "nope", "search": "value"}, "Unknown network"),
                          ({"network": "material", "search": "nope"}, "Unknown search"),
                          ({"network": "material", "search": "mcts", "budget": "0"}, "budget must be"),
                          ({"network": "material", "search": "mcts", "budget": "x"}, "budget must be"),
                          ({"network": "material", "search": "value", "engine_nodes": "5"}, "engine_nodes must be"),
                          ({"network": "material", "search": "value", "engine_nodes": "-1"}, "engine_nodes must be"),
                          ({"network": "material", "search": "value", "engine_nodes": "9" * 40}, "engine_nodes must be"),
                          ({"network": "material", "search": "mcts", "budget": "²"}, "budget must be"),  # isdigit, not int
                          ({"network": "material", "search": "mcts", "budget": "9" * 5000}, "budget must be"),
                          ({"network": "material", "search": "value", "engine_nodes": "²"}, "engine_nodes must be"),
                          ({"network": "material", "search": "value", "engine_nodes": "9" * 5000}, "engine_nodes must be")]:
        bad = client.get("/estimate/", params)
        assert bad.status_code == 400 and words in bad.json()["error"], params
