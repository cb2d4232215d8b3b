"""A network's value is flagged on every page that shows it until it passes the value sanity suite."""

from pathlib import Path

import pytest
import torch

from analysis.checkpoint import save_checkpoint
from analysis.models.chessformer import PRESETS, Chessformer
from tests.web.conftest import SHORT_GAME
from webapp.analyses.gameinput import parse_pgn
from webapp.analyses.jobs import create_job
from webapp.networks.registry import register_checkpoint
from webapp.networks.value_sanity import read_value_sanity

pytestmark = pytest.mark.django_db

PASSED = {"passed": True, "suite_version": 1, "checks": [
    {"name": "start position near 0.5", "passed": True, "detail": "0.52"}]}
FAILED = {"passed": False, "suite_version": 1, "checks": [
    {"name": "start position near 0.5", "passed": False, "detail": "0.0005 for White"},
    {"name": "mirrored positions agree", "passed": True, "detail": "max 0.01"},
    {"name": "side-to-move bias", "passed": False, "detail": "0.21"}]}


def trained_network(tmp_path: Path, name: str, metrics: dict):
    """A checkpoint marked trained whose metadata carries ``metrics``, registered as the site does."""
    torch.manual_seed(1)
    path = tmp_path / f"{name}.safetensors"
    save_checkpoint(path, Chessformer(PRESETS["cf-tiny"]), trained=True, provenance={"source": "tests"},
                    metrics=metrics)
    return register_checkpoint(path, name)


def pages(client, network) -> dict[str, str]:
    job = create_job(parse_pgn(SHORT_GAME), network, "value", 1, dispatch=False)
    return {"game": client.get(f"/jobs/{job.id}/").content.decode(),
            "network": client.get(f"/networks/{network.name}/").content.decode(),
            "panel": client.get(f"/networks/{network.name}/", HTTP_HX_REQUEST="true").content.decode(),
            "home": client.get("/").content.decode()}


def test_a_network_without_a_verdict_is_flagged_not_verified(client, tmp_path):
    network = trained_network(tmp_path, "no-verdict", {"puzzles_policy": {"accuracy": 0.1}})
    for name, body in pages(client, network).items():
        assert "value not verified" in body, name
        assert "fails the sanity suite" not in body, name
    assert "[value not verified]" in pages(client, network)["home"]  # the home form's network choice


def test_a_network_that_failed_is_flagged_with_the_failed_checks(client, tmp_path):
    network = trained_network(tmp_path, "failed-value", {"value_sanity": FAILED})
    found = pages(client, network)
    for name, body in found.items():
        assert "value fails the sanity suite" in body, name
    for name in ("game", "network", "panel"):
        assert "start position near 0.5, side-to-move bias" in found[name], name  # tooltip / detail
    assert "mirrored positions agree" not in found["game"]  # it passed
    assert "<li>side-to-move bias: 0.21</li>" in found["panel"]  # the panel lists each failed check
    assert 'id="graph-value-flag"' in found["game"]


def test_a_network_that_passed_is_not_flagged(client, tmp_path):
    network = trained_network(tmp_path, "passed-value", {"value_sanity": PASSED})
    found = pages(client, network)
    for name, body in found.items():
        assert "value not verified" not in body and "fails the sanity suite" not in body, name
        assert 'class="badge-value"' not in body, name
    assert "passed the value sanity suite (version 1)" in found["network"]
    assert 'id="graph-value-flag"' not in found["game"]


def test_the_untrained_stand_in_carries_both_flags(client, tiny_network):
    found = pages(client, tiny_network)
    assert "untrained" in found["game"] and "value not verified" in found["game"]


def test_the_material_baseline_is_not_a_network_and_not_flagged(client, material_network):
    found = pages(client, material_network)
    for name in ("game", "network", "panel"):
        assert 'class="badge-value"' not in found[name], name
    assert "not a network, so the value sanity suite does not apply" in found["network"]


@pytest.mark.parametrize("entry, state", [
    ("yes", "unverified"), ({"checks": []}, "unverified"), ({"passed": "true"}, "unverified"),
    ({"passed": False, "checks": "none"}, "failed"), ({"passed": True}, "passed"),
])
def test_malformed_verdicts_never_count_as_passed(entry, state):
    sanity = read_value_sanity({"value_sanity": entry})
    assert sanity.state == state
    assert sanity.flagged == (state != "passed")
