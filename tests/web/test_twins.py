"""Registered networks with the same tensors show one strength, from their pooled matches
(``webapp.networks.twins``): the picker, the networks page and the ablation section read it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from analysis.checkpoint_file import read_header, rewrite_metadata
from webapp.networks.models import Network
from webapp.networks.registry import register_checkpoint

KEY = "match_policy_vs_sf1350"
CLOSE = {"a": "net:policy", "b": "stockfish-1350", "wins": 1, "draws": 2, "losses": 97, "elo_diff": -638.2}
FAR = {"a": "net:policy", "b": "stockfish-1350", "wins": 0, "draws": 1, "losses": 99, "elo_diff": -800.0}


def _twin(path: Path, out: Path) -> Path:
    """A copy of ``path`` with other metadata (so another checksum) and the very same tensors."""
    shutil.copyfile(path, out)
    meta, _ = read_header(out)
    meta.metrics = {"note": "a copy"}
    return rewrite_metadata(out, meta)


@pytest.mark.django_db
def test_twins_pool_their_matches_and_strangers_do_not(tiny_checkpoint, tmp_path):
    one = register_checkpoint(Path(tiny_checkpoint), "net-one")
    two = register_checkpoint(_twin(Path(tiny_checkpoint), tmp_path / "twin.safetensors"), "net-two")
    assert one.checksum != two.checksum
    Network.objects.filter(pk=one.pk).update(metrics={KEY: CLOSE})
    Network.objects.filter(pk=two.pk).update(metrics={KEY: FAR})
    one, two = Network.objects.get(pk=one.pk), Network.objects.get(pk=two.pk)
    assert one.strength.elo == two.strength.elo and "+1 =3 -196" in one.strength.elo.text
    assert one.strength.very_weak == two.strength.very_weak  # -759 for both: very weak
    assert one.strength.very_weak

    Network.objects.filter(pk=two.pk).delete()  # alone, each is its own sample
    assert not Network.objects.get(pk=one.pk).strength.very_weak  # -638 is not below -700
