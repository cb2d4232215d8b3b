from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from webapp.networks.figures import DEFAULT_RULE, card_lead, sanity_counts
from webapp.networks.models import Network


def network_panel(request: HttpRequest, name: str) -> HttpResponse:
    """The network panel (an htmx fragment, or a page when opened directly)."""
    network = Network.objects.filter(name=name).first()
    if network is None:
        raise Http404(f"Unknown network {name!r}.")
    template = "networks/_panel.html" if request.htmx else "networks/page.html"
    return render(request, template, {"network": network})


def network_list(request: HttpRequest) -> HttpResponse:
    """Every registered network with its measured figures, so a user can choose one knowingly."""
    rows = [{"network": n, "strength": n.strength, "lead": card_lead(n.card, n.name),
             "sanity": sanity_counts(n.metrics),
             "parameters": f"{n.parameters:,}"} for n in Network.objects.all()]
    return render(request, "networks/list.html", {"rows": rows, "default_rule": DEFAULT_RULE})
