"""A network's value is flagged on every page that shows it until it passes the value sanity suite."""

import dataclasses
import shutil
from pathlib import Path

import pytest
import torch
from django.utils.html import escape

from analysis.checkpoint import load_evaluator, read_header, rewrite_metadata, save_checkpoint
from analysis.eval.value_sanity import run_sanity
from tests.conftest import ROOT
from analysis.models.chessformer import PRESETS, Chessformer
from tests.web.conftest import SHORT_GAME
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import create_job
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
    """A row registered before the site ran the suite itself (the migration drops the file's claim)."""
    network = trained_network(tmp_path, "no-verdict", {"puzzles_policy": {"accuracy": 0.1}})
    network.metrics = {k: v for k, v in network.metrics.items() if k != "value_sanity"}
    network.save(update_fields=["metrics"])
    for name, body in pages(client, network).items():
        assert "value not verified" in body, name
        assert "fails the sanity suite" not in body, name
    assert "[value not verified]" in pages(client, network)["home"]  # the home form's network choice


def test_the_site_runs_the_suite_and_ignores_the_files_claim_of_a_pass(client, tmp_path):
    """Random weights whose file claims a pass: the site's own run fails them, and the pages say which checks."""
    network = trained_network(tmp_path, "claims-a-pass", {"value_sanity": PASSED})
    fresh = run_sanity(load_evaluator(network.path, device="cpu"))
    assert network.metrics["value_sanity"] == fresh and not fresh["passed"]
    failed = [c for c in fresh["checks"] if not c["passed"]]
    found = pages(client, network)
    for name, body in found.items():
        assert "value fails the sanity suite" in body, name
    assert 'id="graph-value-flag"' in found["game"]
    for check in failed:  # the panel lists each failed check with its detail
        assert f"<li>{escape(check['name'])}: {escape(check['detail'])}</li>" in found["panel"]
    passed = next(c["name"] for c in fresh["checks"] if c["passed"])
    assert escape(passed) not in found["game"]  # only failed checks are named


def test_a_network_that_passes_here_is_not_flagged_whatever_its_file_claims(client, tmp_path):
    """The shipped cf-small passes the suite; a copy whose metadata claims a failure is still not flagged."""
    path = tmp_path / "claims-a-failure.safetensors"
    shutil.copy(ROOT / "weights" / "cf-small.safetensors", path)
    meta = read_header(path)[0]
    rewrite_metadata(path, dataclasses.replace(meta, metrics={**meta.metrics, "value_sanity": FAILED}))
    network = register_checkpoint(path, "claims-a-failure")
    assert network.metrics["value_sanity"]["passed"] is True
    found = pages(client, network)
    for name, body in found.items():
        assert "value not verified" not in body and "fails the sanity suite" not in body, name
        assert 'class="badge-value"' not in body, name
    assert "passed the value sanity suite (version 1)" in found["network"]
    assert 'id="graph-value-flag"' not in found["game"]


def test_the_untrained_stand_in_carries_both_flags(client, tiny_network):
    found = pages(client, tiny_network)
    assert "untrained" in found["game"] and "value fails the sanity suite" in found["game"]  # random weights


def test_the_material_baseline_is_not_a_network_and_not_flagged(client, material_network):
    found = pages(client, material_network)
    for name in ("game", "network", "panel"):
        assert 'class="badge-value"' not in found[name], name
    assert "not a network, so the value sanity suite does not apply" in found["network"]


@pytest.mark.parametrize("entry, state", [
    ("yes", "unverified"), ({"checks": []}, "unverified"), ({"passed": "true"}, "unverified"),
    ({"passed": False, "checks": "none", "suite_version": 1}, "failed"), ({"passed": True}, "unverified"),
    ({"passed": True, "suite_version": 1}, "passed"), ({"passed": True, "suite_version": 0}, "unverified"),
    ({"passed": True, "suite_version": "1"}, "unverified"),
])
def test_malformed_verdicts_never_count_as_passed(entry, state):
    sanity = read_value_sanity({"value_sanity": entry})
    assert sanity.state == state
    assert sanity.flagged == (state != "passed")


def test_the_migration_forgets_verdicts_the_site_did_not_make(tmp_path):
    import importlib

    from django.apps import apps

    from webapp.networks.models import Network

    migration = importlib.import_module("webapp.networks.migrations.0005_value_sanity_by_site")
    network = trained_network(tmp_path, "old-row", {"puzzles_policy": {"accuracy": 0.1}})
    Network.objects.filter(pk=network.pk).update(metrics={"value_sanity": PASSED, "puzzles_policy": {"accuracy": 0.1}})
    migration.forget_file_verdicts(apps, None)
    network.refresh_from_db()
    assert network.metrics == {"puzzles_policy": {"accuracy": 0.1}} and network.value_sanity.state == "unverified"
