"""The head atlas page and "show me" (the jump from an atlas cell into the explorer is
``webapp.jobs.explore``: it starts an analysis)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from analysis.heads import LABELS, pattern_table, show_me
from analysis.heads.patterns import PATTERNS
from analysis.positions import board_from_input
from webapp.networks.atlas import atlas_rows, is_stale, ready_atlas, ready_importance, request_atlas, wants_atlas
from webapp.networks.lookup import head_index, network_or_404, out_of_service, withdrawal
from webapp.networks.models import HeadAtlas, Network
from webapp.ondemand.refused import Refused
from workers.dispatch import BrokerUnavailable

@require_GET
def atlas_page(request: HttpRequest, name: str) -> HttpResponse:
    """The atlas, or its progress (an htmx fragment the page polls until the atlas is ready)."""
    network = network_or_404(name)
    row = HeadAtlas.objects.filter(network=network).first()
    atlas = ready_atlas(network)
    importance = ready_importance(network) if atlas else None
    if request.htmx:
        response = render(request, "networks/_atlas_status.html",
                          {"network": network, "row": row, "stale": is_stale(row), "withdrawn": withdrawal(network)})
        if atlas is not None:
            response["HX-Refresh"] = "true"
        return response
    context = {"network": network, "row": row, "stale": is_stale(row), "has_attention": wants_atlas(network),
               "withdrawn": withdrawal(network),
               "atlas": atlas,
               "rows": atlas_rows(atlas, importance) if atlas else [], "importance": importance, "labels": [l for l in LABELS if atlas and l in atlas.counts()],
               "page": {"counts": atlas.counts() if atlas else {}, "thumbnails": atlas.thumbnails if atlas else [],
                        "layers": atlas.layers if atlas else 0, "vocabulary": list(LABELS)}}
    return render(request, "networks/atlas.html", context)


@require_POST
def compute_atlas(request: HttpRequest, name: str) -> HttpResponse:
    """Queue the atlas of a network that has none (or whose last one failed); then show its progress."""
    network = network_or_404(name)
    if not wants_atlas(network):
        return HttpResponse(f"{network.name} has no attention maps, so it has no head atlas", status=400,
                            content_type="text/plain")
    refusal = out_of_service(network)
    if refusal is not None:
        return refusal.text()
    if network.status != Network.Status.READY:
        return HttpResponse(f"{network.name} is not ready yet", status=409, content_type="text/plain")
    try:
        request_atlas(network)
    except BrokerUnavailable as exc:
        return Refused.broker_down(exc, "the head atlas").text()
    return redirect("head_atlas", name=network.name)


def _bad(message: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


@require_GET
def show_head(request: HttpRequest, name: str) -> JsonResponse:
    """``?layer=&head=&fen=``: the head's label, a query square that shows it, the pattern's squares."""
    network = network_or_404(name)
    try:
        l, h = head_index(network, request.GET.get("layer"), request.GET.get("head"))
        board = board_from_input(request.GET.get("fen") or "", [])
    except ValueError as exc:
        return _bad(str(exc))
    atlas = ready_atlas(network)
    if atlas is None:
        return _bad(f"the head atlas of {network.name} is not ready yet", status=409)
    label = atlas.labels[l][h]
    if label not in PATTERNS:
        return JsonResponse({"label": label, "query": None, "squares": [],
                             "note": f"L{l} H{h} follows none of the patterns"})
    shown = show_me(board, label)
    return JsonResponse({"label": label, "query": shown.query, "squares": shown.squares, "note": shown.note,
                         "patterns": pattern_table(board, label)})
