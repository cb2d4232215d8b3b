import logging
from pathlib import Path

from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from webapp.networks import ablations
from webapp.networks.figures import DEFAULT_RULE, SCALE_NOTE, good_for, sanity_counts
from webapp.networks.models import Network

log = logging.getLogger(__name__)


def network_panel(request: HttpRequest, name: str) -> HttpResponse:
    """The network panel (an htmx fragment, or a page when opened directly)."""
    network = Network.objects.filter(name=name).first()
    if network is None:
        raise Http404(f"Unknown network {name!r}.")
    template = "networks/_panel.html" if request.htmx else "networks/page.html"
    return render(request, template, {"network": network})


def network_list(request: HttpRequest) -> HttpResponse:
    """Every registered network with its measured figures, so a user can choose one knowingly; below,
    each ablation's variants side by side (``ablations.sections``), not repeated in the main table."""
    configs = ablations.load_ablations()
    variants = ablations.variant_groups(configs)
    networks = {n.name: n for n in Network.objects.all()}
    rows = [{"network": n, "strength": n.strength, "lead": good_for(n.card, n.name),
             "sanity": sanity_counts(n.metrics),
             "parameters": f"{n.parameters:,}"} for n in networks.values() if n.name not in variants]
    return render(request, "networks/list.html", {"rows": rows, "default_rule": DEFAULT_RULE,
                                                  "elo_scale": SCALE_NOTE,
                                                  "ablations": ablations.sections(networks, configs)})


@require_GET
def network_weights(request: HttpRequest, name: str) -> FileResponse:
    """The network's checkpoint as a download: a ready network's own stored copy, found by its name
    only (no path comes from the request); 404 for an unknown name or a network without a file."""
    network = Network.objects.filter(name=name, status=Network.Status.READY).first()
    if network is None or not network.file:
        raise Http404(f"No weights file for a network named {name!r}.")
    try:
        handle = network.file.open("rb")
    except FileNotFoundError:
        log.warning("network %s: its stored file %s is missing", network.name, network.file.name)
        raise Http404(f"The weights file of {name!r} is missing on this site.") from None
    suffix = "".join(Path(network.file.name).suffixes) or ".safetensors"
    return FileResponse(handle, as_attachment=True, filename=f"{network.name}{suffix}")
