"""The jump from a head atlas cell into the explorer: an analysis of ``EXPLORE_FEN`` opened at that head.

It lives in the analyses app because it starts an analysis; the atlas page (networks app) links here.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from webapp.jobs.gameinput import parse_fen
from webapp.jobs.jobs import BrokerUnavailable, create_job
from webapp.jobs.models import AnalysisJob
from webapp.jobs.ownership import remember_owner, visible_jobs
from webapp.ondemand.refused import Refused
from webapp.jobs.searches import SEARCHES
from webapp.networks.lookup import head_index, network_or_404, out_of_service
from webapp.networks.models import Network

# The explorer's position when it is opened from the atlas: a Ruy Lopez middlegame with every
# piece type of both sides on the board and open lines, so most patterns can show.
EXPLORE_FEN = "r1bqk2r/1pppbppp/p1n2n2/4p3/B3P3/5N2/PPPP1PPP/RNBQ1RK1 w kq - 4 6"


@require_POST
def explore_head(request: HttpRequest, name: str) -> HttpResponse:
    """Open the explorer on one head: a job on ``EXPLORE_FEN``, then its page at that head."""
    network = network_or_404(name)
    layer, _, head = (request.POST.get("head") or "").partition(".")
    try:
        l, h = head_index(network, layer, head)
    except ValueError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain")
    refusal = out_of_service(network)
    if refusal is not None:
        return refusal.text()
    if network.status != Network.Status.READY:
        return HttpResponse(f"{network.name} is not ready for analysis", status=409, content_type="text/plain")
    search = "policy" if network.caps.policy else "value"
    job = _reusable(request, network, search)
    if job is None:
        try:
            job = create_job(parse_fen(EXPLORE_FEN), network, search, SEARCHES[search].budget_default)
        except BrokerUnavailable as exc:
            return Refused.broker_down(exc, "the explorer's analysis").text()
        remember_owner(request, job)
    return redirect(f"{reverse('job', args=[job.id])}?layer={l}&head={h}&showme=1")


def _reusable(request: HttpRequest, network: Network, search: str) -> AnalysisJob | None:
    """This visitor's newest explorer analysis of ``network`` that has not failed: every head of the
    atlas is explored in one analysis, not one per click."""
    return (visible_jobs(request).filter(network=network, start_fen=EXPLORE_FEN, search=search,
                                         budget=SEARCHES[search].budget_default)
            .exclude(status__in=[AnalysisJob.Status.FAILED, AnalysisJob.Status.CANCELLED])
            .order_by("-created_at").first())
