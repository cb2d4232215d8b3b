"""Who owns a job. There are no accounts for visitors: the browser session that started a
job owns it (a user signed in or holding an API token owns it too, and staff own all).
Anyone with the link may watch; only an owner may cancel it or share it on the home page."""

from __future__ import annotations

from django.http import HttpRequest

from webapp.analyses.models import AnalysisJob

OWNED_JOBS_KEY = "owned_jobs"
MAX_OWNED_JOBS = 200


def remember_owner(request: HttpRequest, job: AnalysisJob) -> None:
    owned = request.session.get(OWNED_JOBS_KEY, [])
    request.session[OWNED_JOBS_KEY] = (owned + [str(job.id)])[-MAX_OWNED_JOBS:]


def owns(request: HttpRequest, job: AnalysisJob) -> bool:
    return str(job.id) in request.session.get(OWNED_JOBS_KEY, []) or bool(
        getattr(request, "user", None) and request.user.is_staff)
