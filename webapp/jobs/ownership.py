"""Who owns a job, and which jobs a visitor sees under "Recent analyses".

Visitors have no accounts: the browser session that started a job owns it; a signed-in user
or an API token holder who started one owns it too (``AnalysisJob.owner``), and staff own all.
Anyone with the link may watch a job; only an owner may cancel it or share it on the home
page. The home page lists a visitor's own jobs and the ones their owners shared, never
everyone's: a pasted game may be private.
"""

from __future__ import annotations

from functools import wraps

from django.db.models import Q, QuerySet
from django.http import HttpRequest, JsonResponse

from webapp.jobs.jobs import get_job_or_404
from webapp.jobs.models import AnalysisJob

OWNED_JOBS_KEY = "owned_jobs"
MAX_OWNED_JOBS = 200


def _user(request: HttpRequest):
    user = getattr(request, "user", None)
    return user if user is not None and user.is_authenticated else None


def remember_owner(request: HttpRequest, job: AnalysisJob) -> None:
    owned = request.session.get(OWNED_JOBS_KEY, [])
    request.session[OWNED_JOBS_KEY] = (owned + [str(job.id)])[-MAX_OWNED_JOBS:]
    user = _user(request)
    if user is not None:
        AnalysisJob.objects.filter(pk=job.pk).update(owner=user)
        job.owner = user


def owns(request: HttpRequest, job: AnalysisJob) -> bool:
    user = _user(request)
    return (str(job.id) in request.session.get(OWNED_JOBS_KEY, [])
            or (user is not None and (user.is_staff or job.owner_id == user.pk)))


def owner_only(doing: str):
    """A job view for its owners only: it is called with the job (404 for an unknown id), and
    anyone else gets a 403 saying who may ``doing`` ("cancel it")."""
    def decorate(view):
        @wraps(view)
        def checked(request: HttpRequest, job_id: str, *args, **kwargs):
            job = get_job_or_404(job_id)
            if not owns(request, job):
                return JsonResponse({"error": f"Only the browser session or account that started this analysis "
                                              f"(or an admin) can {doing}."}, status=403)
            return view(request, job, *args, **kwargs)
        return checked
    return decorate


def visible_jobs(request: HttpRequest) -> QuerySet[AnalysisJob]:
    """The visitor's own jobs (this session's, or their account's) and every shared one."""
    mine = Q(pk__in=request.session.get(OWNED_JOBS_KEY, [])) | Q(shared=True)
    user = _user(request)
    if user is not None:
        mine |= Q(owner=user)
    return AnalysisJob.objects.filter(mine)
