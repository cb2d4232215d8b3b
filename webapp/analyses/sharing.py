"""Sharing from the game page: the analysed game as PGN, a position as an SVG picture, and
listing the job on everyone's home page."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from webapp.analyses.boardsvg import board_svg
from webapp.analyses.export import export_pgn
from webapp.analyses.jobs import get_job_or_404
from webapp.analyses.models import AnalysisJob
from webapp.analyses.ownership import owns
from webapp.analyses.results import job_results


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
    results = job_results(job).get(node_id, {})
    svg = board_svg(job.nodes, node_id, results, flipped=flipped == "1")
    response = HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    return _attachment(response, f"sightline-{job.id.hex[:8]}-{node_id}.svg")


@require_POST
def share(request: HttpRequest, job_id: str) -> HttpResponse:
    """List the job under everyone's Recent analyses (``shared=1``), or stop (``shared=0``): owners only."""
    job = get_job_or_404(job_id)
    if not owns(request, job):
        return JsonResponse({"error": "Only the browser session or account that started this analysis (or an "
                                      "admin) can share it."}, status=403)
    value = request.POST.get("shared")
    if value not in ("0", "1"):
        return JsonResponse({"error": "shared must be 0 or 1."}, status=400)
    AnalysisJob.objects.filter(pk=job.pk).update(shared=value == "1")
    if request.headers.get("Accept", "").startswith("application/json"):
        return JsonResponse({"shared": value == "1"})
    return redirect("job", job_id=job.id)
