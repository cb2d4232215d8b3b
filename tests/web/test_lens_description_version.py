"""A lens description stored before the lens knew patching (no ``version``) is stale: the data
migration and serve's registration describe the network again, so the studies app can refuse a
method the network cannot take at submission (a 422) instead of failing in the worker."""

from __future__ import annotations

import importlib

from django.apps import apps

from analysis.lens.description import VERSION, LensDescription
from webapp.networks.models import Network
from webapp.networks.registry import already_checked, register_checkpoint

MIGRATION = "webapp.networks.migrations.0008_lens_description_version"


def _aged(described: dict) -> dict:
    """The description as an older version stored it: no version, and silent on the patching capabilities."""
    old = {k: v for k, v in described.items() if k != "version"}
    old["unavailable"] = {k: v for k, v in old.get("unavailable", {}).items()
                          if k not in ("patch", "head_patch", "attention_zero")}
    return old


def test_a_description_is_current_only_when_made_by_this_version(tiny_network):
    assert tiny_network.lens_description["version"] == VERSION
    assert LensDescription.is_current(tiny_network.lens_description)
    assert not LensDescription.is_current(_aged(tiny_network.lens_description))
    assert not LensDescription.is_current({})


def test_the_migration_describes_stale_networks_again_and_leaves_unreadable_ones(tiny_network):
    described = tiny_network.lens_description
    Network.objects.filter(pk=tiny_network.pk).update(lens_description=_aged(described))
    importlib.import_module(MIGRATION).describe_stale(apps, None)
    assert Network.objects.get(pk=tiny_network.pk).lens_description == described
    Network.objects.filter(pk=tiny_network.pk).update(lens_description=_aged(described), file="missing.safetensors")
    importlib.import_module(MIGRATION).describe_stale(apps, None)
    assert Network.objects.get(pk=tiny_network.pk).lens_description == _aged(described)


def test_registering_a_network_again_refreshes_a_stale_description(tiny_network, tiny_checkpoint):
    """serve registers the shipped networks on every start: a stale row is checked again, a current one is not."""
    described = tiny_network.lens_description
    Network.objects.filter(pk=tiny_network.pk).update(lens_description=_aged(described))
    assert not already_checked(Network.objects.get(pk=tiny_network.pk))
    network = register_checkpoint(tiny_checkpoint, tiny_network.name)
    assert network.pk == tiny_network.pk and network.lens_description == described
    assert already_checked(network)


def test_a_refreshed_description_lets_the_lab_refuse_at_submission(client, tiny_network):
    """What a stale row could not say: the network lacks a patching capability (here made so)."""
    lacking = {**tiny_network.lens_description,
               "unavailable": {"head_patch": "its heads cannot be patched one by one"}}
    Network.objects.filter(pk=tiny_network.pk).update(lens_description=lacking)
    answer = client.post("/studies/", {"network": tiny_network.name, "method": "heads", "kind": "fens",
                                       "text": "8/8/8/8/8/8/8/K6k w - - 0 1", "limit": 5, "seed": 0, "settings": "{}"})
    assert answer.status_code == 422 and "its heads cannot be patched one by one" in answer.content.decode()
