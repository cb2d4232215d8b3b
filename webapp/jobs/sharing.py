"""Sharing from the game page: the analysed game as PGN, a position as an SVG picture (with
the explorer's attention map when asked), and listing the job on everyone's home page."""

from __future__ import annotations

import chess
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from webapp.jobs.attention_maps import decode_layer, dequantise
from webapp.jobs.boardsvg import AttentionView, board_svg
from webapp.jobs.export import export_pgn
from webapp.jobs.jobs import get_job_or_404
from webapp.jobs.keys import node_key
from webapp.jobs.models import AnalysisJob, AttentionMap
from webapp.jobs.ownership import owner_only
from webapp.jobs.results import job_results
from webapp.ondemand.refused import Refused


def _attachment(response: HttpResponse, filename: str) -> HttpResponse:
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@require_GET
def pgn_export(request: HttpRequest, job_id: str) -> HttpResponse:
    """What is known so far: a running job exports the evaluations already made."""
    job = get_job_or_404(job_id)
    response = HttpResponse(export_pgn(job), content_type="application/x-chess-pgn; charset=utf-8")
    return _attachment(response, f"sightline-{job.id.hex[:8]}.pgn")


@require_GET
def board_picture(request: HttpRequest, job_id: str, node_id: int) -> HttpResponse:
    job = get_job_or_404(job_id)
    if not 0 <= node_id < len(job.nodes):
        return JsonResponse({"error": f"This analysis has no position {node_id}."}, status=404)
    flipped = request.GET.get("flip", "0")
    if flipped not in ("0", "1"):
        return JsonResponse({"error": "flip must be 0 or 1."}, status=400)
    try:
        attention = _attention_view(request, job, node_id)
    except Refused as refused:
        return refused.json()
    results = job_results(job).get(node_id, {})
    svg = board_svg(job.nodes, node_id, results, flipped=flipped == "1", attention=attention)
    response = HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    return _attachment(response, f"sightline-{job.id.hex[:8]}-{node_id}.svg")


def _attention_view(request: HttpRequest, job: AnalysisJob, node_id: int):
    """(AttentionView, that layer's maps) from ``?layer=&head=&query=&mode=`` (the explorer's link
    parameters), or None without ``layer``. Only stored maps are drawn: a picture queues no work."""
    layer, head = request.GET.get("layer"), request.GET.get("head", "mean")
    query, mode = request.GET.get("query"), request.GET.get("mode", "row")
    # The contract first, with or without layer (400: what the schema says), then what this network has.
    if layer is not None and not (layer.isascii() and layer.isdigit()):
        raise Refused("layer must be a whole number, 0 or more.")
    if head != "mean" and not (head.isascii() and head.isdigit()):
        raise Refused('head must be "mean" or a whole number, 0 or more.')
    if query is not None and query not in chess.SQUARE_NAMES:
        raise Refused("query must be a square name, a1 to h8.")
    if mode not in ("row", "col"):
        raise Refused("mode must be row or col.")
    if layer is None:
        return None
    shape = job.network.caps.attention
    if shape is None:
        raise Refused(f"{job.network.name} has no attention maps.", status=404)
    layers, heads = shape
    if _count(layer) >= layers:
        raise Refused(f"layer must be a number from 0 to {layers - 1}.", status=422)
    if head != "mean" and _count(head) >= heads:
        raise Refused(f'head must be "mean" or a number from 0 to {heads - 1}.', status=422)
    if query is None:
        raise Refused("With layer, give query: the square whose attention is drawn, a1 to h8.", status=422)
    key = node_key(job, node_id)
    entry = AttentionMap.objects.filter(position_key=key, network_checksum=job.network.checksum,
                                        status=AttentionMap.Status.READY).first()
    if entry is None:
        raise Refused("This position's attention is not computed yet: open the attention explorer "
                               "on it first, then download the picture.", status=409)
    maps = dequantise(*decode_layer(bytes(entry.data), entry.layers, entry.heads, int(layer)), entry.heads)
    view = AttentionView(int(layer), head if head == "mean" else int(head), chess.parse_square(query), mode)
    return view, maps


def _count(digits: str) -> int:
    """ASCII digits as a number; one too long to read (int() refuses 4,300 digits) is simply too large."""
    digits = digits.lstrip("0") or "0"
    return int(digits) if len(digits) <= 18 else 10**18


@require_POST
@owner_only("share it")
def share(request: HttpRequest, job: AnalysisJob) -> HttpResponse:
    """List the job under everyone's Recent analyses (``shared=1``), or stop (``shared=0``): owners only."""
    value = request.POST.get("shared")
    if value not in ("0", "1"):
        return JsonResponse({"error": "shared must be 0 or 1."}, status=400)
    AnalysisJob.objects.filter(pk=job.pk).update(shared=value == "1")
    if request.headers.get("Accept", "").startswith("application/json"):
        return JsonResponse({"shared": value == "1"})
    return redirect("job", job_id=job.id)
