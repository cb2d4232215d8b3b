"""A network named in a URL, and a head of it: found and checked once for every app that takes them;
and whether new computations may run on a network (``in_service``), asked by every feature's request
path before it queues anything."""

from __future__ import annotations

from django.http import Http404

from webapp.networks.models import Network
from webapp.ondemand.refused import Refused

# 410 Gone: the network was there and is not any more, for good unless an admin or serve offers it again.
# The one status for a withdrawn or retired network everywhere (a network still being checked is 409).
WITHDRAWN_STATUS = 410


def withdrawal(network: Network) -> str:
    """Why no new computation may run on ``network`` ("" while it is offered)."""
    if network.active:
        return ""
    if network.retired:
        return f"{network.name} was retired by serve: {network.retired}."
    return f"{network.name} was withdrawn by an admin."


def out_of_service(network: Network) -> Refused | None:
    """The refusal of new work on a withdrawn or retired network (410 with the reason), else None; in the
    shape of ``OnDemand.serve``'s ``check_new`` hook. Stored results stay readable: only new work is refused."""
    why = withdrawal(network)
    return Refused(f"{why} Nothing new is computed with it; what is stored can still be read.",
                   status=WITHDRAWN_STATUS) if why else None


def in_service(network: Network) -> Network:
    """``network`` when new computations may run on it; else raises ``out_of_service``'s refusal."""
    refusal = out_of_service(network)
    if refusal is not None:
        raise refusal
    return network


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
