"""The JSON API: submit a game, read a job (``analyses.views.job_state``), read a position,
read an attention layer (``analyses.views.attention``).

Submitting needs an account: a token (``Authorization: Token ...``, for scripts) or a signed-in
browser session, which Django REST framework holds to Django's CSRF check. Reading is open,
as the game page is, to anyone with a job's id. Every error is ``{"error": message}`` with a
4xx status (``webapp.api.errors``); a refused submission saves nothing.
"""

from __future__ import annotations

from django.http import QueryDict
from django.urls import reverse
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.analyses.export import position_score
from webapp.analyses.forms import AnalyseForm
from webapp.analyses.gameinput import board_for
from webapp.analyses.jobs import BrokerUnavailable, create_job, get_job_or_404
from webapp.analyses.ownership import remember_owner
from webapp.analyses.results import job_results

SUBMIT_FIELDS = ("pgn", "fen", "network", "search", "budget", "game_index")


class SubmitJob(APIView):
    """POST /api/jobs/: the home form's fields as JSON or form data; 201 with the job's links."""

    permission_classes = [IsAuthenticated]

    def post(self, request):
        form = AnalyseForm(_form_data(request.data))
        if not form.is_valid():
            return Response(_form_errors(form), status=form.status_code)
        try:
            job = create_job(form.tree, form.cleaned_data["network"], form.cleaned_data["search"],
                             form.cleaned_data["budget"])
        except BrokerUnavailable:
            return Response({"error": "The analysis queue is unavailable right now, so nothing was started. "
                                      "Please try again in a minute."}, status=503, headers={"Retry-After": "30"})
        remember_owner(request, job)
        links = _job_links(request, job)
        return Response(links, status=status.HTTP_201_CREATED, headers={"Location": links["api"]})


def _form_data(data) -> QueryDict:
    """The submitted fields as the form reads them (JSON numbers become text, as a form post sends)."""
    if not hasattr(data, "get"):
        return QueryDict(mutable=True)
    form_data = QueryDict(mutable=True)
    for name in SUBMIT_FIELDS:
        value = data.get(name)
        if value is not None and not isinstance(value, (dict, list)):
            form_data[name] = str(value)
    return form_data


def _form_errors(form: AnalyseForm) -> dict:
    errors = {field: [str(e) for e in messages] for field, messages in form.errors.items()}
    first = next(iter(errors.values()))[0]
    body = {"error": first, "errors": errors}
    if form.games:
        body["games"] = [{"index": g.index, "label": g.label} for g in form.games]
    return body


def _job_links(request, job) -> dict:
    return {"id": str(job.id), "status": job.status, "title": job.title,
            "page": request.build_absolute_uri(reverse("job", args=[job.id])),
            "api": request.build_absolute_uri(reverse("job_state", args=[job.id])),
            "pgn": request.build_absolute_uri(reverse("job_pgn", args=[job.id]))}


class PositionDetail(APIView):
    """GET /api/jobs/<id>/nodes/<n>/: one position of a job with what is known about it."""

    authentication_classes: list = []  # open to anyone with the id, as the game page
    permission_classes: list = []

    def get(self, request, job_id: str, node_id: int):
        job = get_job_or_404(job_id)
        if not 0 <= node_id < len(job.nodes):
            raise NotFound(f"This analysis has no position {node_id}.")
        node = {k: v for k, v in job.nodes[node_id].items() if k != "key"}
        results = job_results(job).get(node_id, {})
        board = board_for(job.nodes, node_id)
        score = position_score(results, board) if node.get("outcome") is None else None
        white = score.white() if score is not None else None
        return Response({"job": str(job.id), "node": node, "results": results,
                         "eval": None if white is None else {"cp": white.score(), "mate": white.mate()}})
