"""Registering shipped weights: trained ones become the default, an untrained stand-in otherwise."""

import shutil

import pytest
import torch

from analysis.checkpoint import save_checkpoint
from analysis.models.chessformer import PRESETS, Chessformer
from webapp.networks.lookup import withdrawal
from webapp.networks.models import Network
from tests.conftest import ROOT
from webapp.networks.shipped import STAND_IN_NAME, register_shipped

pytestmark = pytest.mark.django_db


def test_untrained_only_registers_a_labelled_stand_in(tmp_path, tiny_checkpoint):
    weights = tmp_path / "weights"
    weights.mkdir()
    shutil.copy(tiny_checkpoint, weights / "cf-tiny.safetensors")
    register_shipped(weights, tmp_path / "var")
    stand_in = Network.objects.get(name=STAND_IN_NAME)
    assert stand_in.is_untrained and stand_in.is_default and stand_in.preset == "cf-small"
    assert "UNTRAINED" in stand_in.card and "[untrained]" in stand_in.display_label
    assert Network.objects.get(name="cf-tiny").is_untrained
    assert Network.objects.filter(name="material").exists()


def test_a_trained_checkpoint_becomes_the_default_with_its_card(tmp_path, tiny_checkpoint):
    weights = tmp_path / "weights"
    weights.mkdir()
    shutil.copy(tiny_checkpoint, weights / "cf-tiny.safetensors")
    register_shipped(weights, tmp_path / "var")  # first start: no trained network yet
    torch.manual_seed(1)
    save_checkpoint(weights / "cf-small.safetensors", Chessformer(PRESETS["cf-tiny"]), trained=True,
                    provenance={"source": "test"})
    (weights / "cf-small.md").write_text("# cf-small\n\nTrained on test data.")
    register_shipped(weights, tmp_path / "var")  # a later start, after training
    default = Network.objects.get(is_default=True)
    assert default.name == "cf-small" and default.trained and not default.is_untrained
    assert default.card.startswith("# cf-small")
    assert not Network.objects.get(name=STAND_IN_NAME).active
    assert withdrawal(Network.objects.get(name=STAND_IN_NAME)) == (
        f"{STAND_IN_NAME} was retired by serve: a trained network is shipped, so the untrained stand-in is no "
        "longer offered.")
    assert list(Network.objects.filter(active=True).values_list("name", flat=True))[0] == "cf-small"


def test_a_new_version_of_a_shipped_file_takes_its_name_and_the_old_one_is_kept(tmp_path):
    from analysis.checkpoint import file_sha256

    weights = tmp_path / "weights"
    weights.mkdir()
    path = weights / "cf-small.safetensors"
    torch.manual_seed(1)
    save_checkpoint(path, Chessformer(PRESETS["cf-tiny"]), trained=True, provenance={"source": "version 1"})
    register_shipped(weights, tmp_path / "var")
    first = Network.objects.get(name="cf-small")
    torch.manual_seed(2)
    save_checkpoint(path, Chessformer(PRESETS["cf-tiny"]), trained=True, provenance={"source": "version 2"})
    register_shipped(weights, tmp_path / "var")  # the next start, after an upgrade
    current = Network.objects.get(name="cf-small")
    assert current.checksum == file_sha256(path) != first.checksum and current.is_default
    old = Network.objects.get(pk=first.pk)
    assert old.name == f"cf-small@{first.checksum[:12]}" and not old.active and not old.is_default
    assert withdrawal(old) == f"{old.name} was retired by serve: cf-small.safetensors holds a new version, offered as cf-small."
    register_shipped(weights, tmp_path / "var")  # and a restart changes nothing
    assert Network.objects.filter(name__startswith="cf-small").count() == 2


def test_a_network_moved_to_retired_is_no_longer_offered(tmp_path, tiny_checkpoint):
    weights = tmp_path / "weights"
    weights.mkdir()
    torch.manual_seed(1)
    save_checkpoint(weights / "old-net.safetensors", Chessformer(PRESETS["cf-tiny"]), trained=True,
                    provenance={"source": "test"})
    shutil.copy(tiny_checkpoint, weights / "cf-tiny.safetensors")
    register_shipped(weights, tmp_path / "var")
    assert Network.objects.get(name="old-net").active and Network.objects.get(name="old-net").is_default
    (weights / "retired").mkdir()
    (weights / "old-net.safetensors").rename(weights / "retired" / "old-net.safetensors")
    register_shipped(weights, tmp_path / "var")  # the next start
    old = Network.objects.get(name="old-net")
    assert not old.active and not old.is_default and Network.objects.get(is_default=True).name != "old-net"
    assert withdrawal(old) == "old-net was retired by serve: its file was moved to weights/retired/."
    assert Network.objects.get(name="cf-tiny").active


def test_the_weights_readme_is_the_card_when_no_own_card(tmp_path, tiny_checkpoint):
    weights = tmp_path / "weights"
    weights.mkdir()
    save_checkpoint(weights / "cf-small.safetensors", Chessformer(PRESETS["cf-tiny"]), trained=True,
                    provenance={"source": "test"})
    (weights / "README.md").write_text("# Shipped weights\n\n## cf-small: measured 7.9% on puzzles")
    register_shipped(weights, tmp_path / "var")
    assert "measured 7.9% on puzzles" in Network.objects.get(name="cf-small").card


def test_the_shipped_repository_network_has_its_card():
    from webapp.networks.shipped import _card_for

    card = _card_for(ROOT / "weights" / "cf-small.safetensors")
    assert card is not None and "puzzles" in card and "cf-small" in card


def test_the_shipped_network_says_how_it_was_trained_and_what_it_measured():
    from analysis.checkpoint import read_header

    path = ROOT / "weights" / "cf-small.safetensors"
    meta, _ = read_header(path)
    assert meta.trained
    for key in ("steps", "wall_seconds", "hardware", "data_card", "train_rows", "swa"):
        assert meta.provenance.get(key), key
    assert meta.provenance["data_card"]["annotate"]["stockfish"].startswith("Stockfish")
    # The value agent's STS and match were not re-run for the stage-4 file (the card says so).
    measured = {"puzzles_policy", "puzzles_value", "sts_policy", "metrics_policy", "match_policy_vs_sf1350",
                "baseline_puzzles", "baseline_sts", "baseline_metrics", "baseline_match_vs_sf1350",
                "value_quality", "baseline_value_quality", "value_sanity"}
    assert measured <= set(meta.metrics)
    for name in ("match_policy_vs_sf1350", "match_value_vs_sf1350", "baseline_match_vs_sf1350"):
        assert name not in meta.metrics or meta.metrics[name]["games"] >= 100, name
    assert path.stat().st_size < 25_000_000
    # The card reports every figure the file carries, and says which were not measured.
    card = (ROOT / "weights" / "README.md").read_text()
    for name in ("puzzles_policy", "puzzles_value", "baseline_puzzles"):
        m = meta.metrics[name]
        assert f"{100 * m['accuracy']:.1f}% ({m['solved']}/{m['total']})" in card, name
    for name in ("sts_policy", "sts_value", "baseline_sts"):
        if name in meta.metrics:
            assert f"{meta.metrics[name]['score']} / 15000" in card, name
        else:
            assert "not measured" in card, name
    quality = meta.metrics["value_quality"]["overall"]
    assert f"{quality['ece']:.3f}" in card and f"{quality['side_to_move_bias']:+.3f}" in card


def test_a_second_start_does_not_check_an_unchanged_file_again(tmp_path, tiny_checkpoint, monkeypatch):
    """The check (load, probe, sanity run, timing) is keyed by the file's checksum and done once; a changed
    file, or a row whose copy of the file is gone, is checked again."""
    from webapp.networks import registry

    weights = tmp_path / "weights"
    weights.mkdir()
    shutil.copy(tiny_checkpoint, weights / "cf-tiny.safetensors")
    checked = []
    inspect = registry.inspect_checkpoint
    monkeypatch.setattr(registry, "inspect_checkpoint", lambda path: checked.append(path.name) or inspect(path))
    register_shipped(weights, tmp_path / "var")
    first = sorted(checked)
    assert "cf-tiny.safetensors" in first
    checked.clear()
    register_shipped(weights, tmp_path / "var")  # a warm start: nothing changed
    assert checked == []
    tiny = Network.objects.get(name="cf-tiny")
    assert tiny.status == Network.Status.READY and tiny.active and tiny.family == "chessformer"
    tiny.path.unlink()  # the site's copy lost: checked (and copied) again
    register_shipped(weights, tmp_path / "var")
    assert checked == ["cf-tiny.safetensors"] and Network.objects.get(name="cf-tiny").path.is_file()


def test_the_site_answers_before_registering_only_once_an_earlier_start_registered_networks(tiny_checkpoint):
    """serve starts its web server before the registration on a warm install; on a new one the home form
    would offer nothing yet, so it waits."""
    from webapp.networks.registry import ensure_material_network, register_checkpoint
    from webapp.site.signals import may_answer_early

    def answers():
        return [answer for _, answer in may_answer_early.send(sender=None)]

    ensure_material_network()
    assert answers() == [False]
    register_checkpoint(tiny_checkpoint, "cf-tiny")
    assert answers() == [True]
