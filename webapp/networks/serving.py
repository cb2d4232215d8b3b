"""The networks app's part of ``serve``'s start (``webapp.site.signals.serving``)."""

from __future__ import annotations

from typing import Callable

from workers.dispatch import BrokerUnavailable


def register_on_start(sender=None, log: Callable[[str], None] = print, **kwargs) -> list[str]:
    """The shipped networks, each trained one's head atlas queued for the worker started next; then the
    ablations' variants, each new one's check queued (``shipped.register_variants``). The lines say what."""
    from webapp.networks.atlas import request_atlas
    from webapp.networks.shipped import register_shipped, register_variants

    lines = []
    for network in register_shipped():
        network.refresh_from_db()
        if network.trained:
            try:
                request_atlas(network)
            except BrokerUnavailable:  # an external Redis that is down: the atlas page offers it later
                log(f"the head atlas of {network.name} was not queued: the broker cannot be reached")
        lines.append(f"network: {network.display_label}" + ("  [default]" if network.is_default else ""))
    for network in register_variants():  # checked by the worker; their atlases computed when asked
        lines.append(f"ablation variant: {network.name} ({network.get_status_display()})")
    return lines


def registered_before(sender=None, **kwargs) -> bool:
    """Whether an earlier start registered a network to analyse with, so the pages may answer while this
    start registers them again (unchanged files only pay their checksum); False on a new install, whose
    home form would offer no network yet."""
    from webapp.networks.models import Network

    return Network.objects.offered().filter(kind=Network.Kind.CHECKPOINT).exists()
