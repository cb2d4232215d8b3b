"""A network named in a URL, and a head of it: found and checked once for every app that takes them."""

from __future__ import annotations

from django.http import Http404

from webapp.networks.models import Network


def network_or_404(name: str) -> Network:
    network = Network.objects.filter(name=name).first()
    if network is None:
        raise Http404(f"Unknown network {name!r}.")
    return network


def head_index(network: Network, layer: str | None, head: str | None) -> tuple[int, int]:
    """(layer, head) from 0, checked against the network's shape (ValueError says what is wrong)."""
    shape = network.caps.attention
    if shape is None:
        raise ValueError(f"{network.name} has no attention maps")
    try:
        l, h = int(layer), int(head)
    except (TypeError, ValueError):
        raise ValueError("give the layer and the head as numbers (from 0)") from None
    if not (0 <= l < shape[0] and 0 <= h < shape[1]):
        raise ValueError(f"{network.name} has layers 0 to {shape[0] - 1} and heads 0 to {shape[1] - 1}")
    return l, h
