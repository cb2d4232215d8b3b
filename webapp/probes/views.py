"""The concept atlas page (``/networks/<name>/concepts/``): the atlas or its progress (an htmx
fragment polled until it is ready), its computation asked for, and the comparison with other
networks whose atlases are ready (``?compare=a,b``: the knowing side of knowing vs doing)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from webapp.networks.lookup import network_or_404, out_of_service, withdrawal
from webapp.networks.models import Network
from webapp.ondemand.refused import Refused
from webapp.probes.atlas import is_stale, ready_row, request_atlas, table, why_not
from webapp.probes.models import ConceptAtlas
from workers.dispatch import BrokerUnavailable

MAX_COMPARE = 4


def comparison(row: ConceptAtlas, names: list[str]) -> tuple[list[str], list[dict]]:
    """(the networks lined up, one row per concept: its best score and selectivity per network)."""
    others = [r for r in ConceptAtlas.objects.select_related("network").filter(
        network__name__in=names[:MAX_COMPARE], status=ConceptAtlas.Status.READY) if not is_stale(r)]
    columns = [row] + [r for r in others if r.pk != row.pk]
    cells = {r.network.name: {c["name"]: c for c in table(r)} for r in columns}
    rows = [{"name": c["name"], "cells": [cells[r.network.name].get(c["name"]) for r in columns]} for c in table(row)]
    return [r.network.name for r in columns], rows


def knowing_reading(names: list[str], rows: list[dict]) -> list[str]:
    """The plain reading of the knowing side along the networks as lined up (``analysis.probes.doing``:
    knowing is flat when every pair of best-score intervals overlaps); the doing side is the study's."""
    from analysis.probes.doing import KNOWING, reading

    know = {name: {} for name in names}
    for row in rows:
        if row["name"] not in KNOWING:
            continue
        for name, cell in zip(names, row["cells"]):
            if cell and cell.get("trained"):
                know[name][row["name"]] = cell["trained"]
    return reading(names, know, {}) if len(names) > 1 else []


@require_GET
def concepts_page(request: HttpRequest, name: str) -> HttpResponse:
    network = network_or_404(name)
    row = ConceptAtlas.objects.filter(network=network).first()
    ready = ready_row(network)
    context = {"network": network, "row": row, "stale": is_stale(row), "why": why_not(network),
               "withdrawn": withdrawal(network)}
    if request.htmx:
        response = render(request, "probes/_status.html", context)
        if ready is not None:
            response["HX-Refresh"] = "true"
        return response
    if ready is not None:
        asked = [n for value in request.GET.getlist("compare") for n in value.split(",") if n]
        names, rows = comparison(ready, asked)
        context.update(atlas=ready.data, rows=table(ready), compare_names=names, compare_rows=rows,
                       reading=knowing_reading(names, rows),
                       others=[r.network.name for r in ConceptAtlas.objects.select_related("network").filter(
                           status=ConceptAtlas.Status.READY).exclude(network=network) if not is_stale(r)])
    return render(request, "probes/concepts.html", context)


@require_POST
def compute(request: HttpRequest, name: str) -> HttpResponse:
    network = network_or_404(name)
    why = why_not(network)
    if why:
        return HttpResponse(why, status=422, content_type="text/plain")
    refusal = out_of_service(network)
    if refusal is not None:
        return refusal.text()
    if network.status != Network.Status.READY:
        return HttpResponse(f"{network.name} is not ready yet", status=409, content_type="text/plain")
    try:
        request_atlas(network)
    except BrokerUnavailable as exc:
        return Refused.broker_down(exc, "the concept atlas").text()
    return redirect("concepts", name=network.name)
