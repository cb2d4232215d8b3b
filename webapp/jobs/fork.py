"""Fork: a visitor who does not own an analysis explores moves in a copy of their own
(``jobs.copy_job``); only the owner may change the original."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from webapp.jobs.jobs import BrokerUnavailable, copy_job, get_job_or_404
from webapp.jobs.ownership import remember_owner
from webapp.networks.lookup import in_service
from webapp.ondemand.refused import Refused


@require_POST
def fork(request: HttpRequest, job_id: str) -> HttpResponse:
    """POST ``node`` (the position shown): the copy's page at that position."""
    job = get_job_or_404(job_id)
    node = request.POST.get("node", "0")
    if not node.isdigit() or int(node) >= len(job.nodes):
        return HttpResponse(f"This analysis has no position {node[:12]}.", status=400, content_type="text/plain")
    try:
        in_service(job.network)
        copy = copy_job(job)
    except Refused as refused:
        return refused.text()
    except BrokerUnavailable as exc:
        return Refused.broker_down(exc, "your copy of the analysis").text()
    remember_owner(request, copy)
    return redirect(f"{reverse('job', args=[copy.id])}#{int(node)}")
