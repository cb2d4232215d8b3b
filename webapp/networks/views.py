from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from webapp.networks.models import Network


def network_panel(request: HttpRequest, name: str) -> HttpResponse:
    """The network panel (an htmx fragment, or a page when opened directly)."""
    network = Network.objects.filter(name=name).first()
    if network is None:
        raise Http404(f"Unknown network {name!r}.")
    template = "networks/_panel.html" if request.htmx else "networks/page.html"
    return render(request, template, {"network": network})
