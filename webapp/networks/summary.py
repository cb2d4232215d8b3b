"""A network as the API and a job's JSON describe it: what it is and its measured figures
(``figures.strength``, from its card's metrics), with links to its card and head atlas."""

from __future__ import annotations

from django.urls import reverse

from webapp.networks.figures import SCALE_NOTE, Measured, Rating
from webapp.networks.lookup import withdrawal
from webapp.networks.models import Network


def _figure(found: Measured | None) -> dict | None:
    return None if found is None else {"value": found.value, "text": found.text, "agent": found.agent}


def _rating(found: Rating | None) -> dict | None:
    return None if found is None else {"value": found.value, "low": found.low, "high": found.high,
                                       "text": found.text, "scale": SCALE_NOTE}


def network_brief(network: Network, absolute) -> dict:
    """Name, family, trained and its page: what a job's JSON says of the network that analysed it.
    ``absolute`` turns a path into a URL (``request.build_absolute_uri``)."""
    return {"name": network.name, "family": network.family, "trained": network.trained,
            "page": absolute(reverse("network", args=[network.name]))}


def network_json(network: Network, absolute) -> dict:
    """Everything the networks page shows of ``network``, as JSON."""
    found = network.strength
    return {**network_brief(network, absolute), "preset": network.preset, "kind": network.kind,
            "parameters": network.parameters, "size_bytes": network.size_bytes,
            "offered": network.active and network.status == Network.Status.READY, "status": network.status,
            "withdrawn": withdrawal(network) or None,
            "default": network.is_default, "very_weak": found.very_weak, "headline": found.headline,
            "value_sanity": network.value_sanity.state,
            "figures": {"puzzles": _figure(found.puzzles), "sts": _figure(found.sts),
                        "elo_vs_sf1350": _figure(found.elo), "value_quality": _figure(found.value_quality),
                        "elo": _rating(found.rating), "puzzles_one_agent": _figure(found.one_agent)},
            "head_atlas": absolute(reverse("head_atlas", args=[network.name])) if network.caps.attention else None}
