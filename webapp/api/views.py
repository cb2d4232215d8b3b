"""The JSON API: submit a game, read a job (``webapp.jobs.state``), read a position,
read an attention layer (``analyses.views.attention``). Its OpenAPI schema is served at
``/api/schema/`` (drf-spectacular, from the ``extend_schema`` notes here and ``webapp.api.schema``).

Submitting needs an account: a token (``Authorization: Token ...``, for scripts) or a signed-in
browser session, which Django REST framework holds to Django's CSRF check. Reading is open,
as the game page is, to anyone with a job's id. Every error is ``{"error": message}`` with a
4xx status (``webapp.api.errors``); a refused submission saves nothing.
"""

from __future__ import annotations

from django.http import JsonResponse, QueryDict
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.jobs.export import position_score
from webapp.jobs.forms import AnalyseForm
from webapp.jobs.gameinput import board_for
from webapp.jobs.jobs import BrokerUnavailable, create_job, get_job_or_404
from webapp.jobs.ownership import remember_owner
from webapp.jobs.results import job_results
from webapp.jobs.state import job_state
from webapp.api import schema, submission
from webapp.api.openread import OpenRead
from webapp.networks.figures import DEFAULT_RULE
from webapp.networks.models import Network
from webapp.networks.summary import network_json

SUBMIT_FIELDS = ("pgn", "fen", "network", "search", "budget", "game_index", "engine_nodes")


class ApiIndex(APIView):
    """GET /api/: where the OpenAPI schema and its readable docs are, and where to submit."""

    authentication_classes: list = []
    permission_classes: list = []

    @extend_schema(operation_id="api_index", description="Where the OpenAPI schema and its readable docs are, and "
                   "where to submit.",
                   responses={200: schema.Index})
    def get(self, request):
        return Response({"schema": request.build_absolute_uri(reverse("api_schema")),
                         "docs": request.build_absolute_uri(reverse("api_docs")),
                         "submit": request.build_absolute_uri(reverse("api_submit")),
                         "networks": request.build_absolute_uri(reverse("api_networks"))})


class NetworkList(APIView):
    """GET /api/networks/: every registered network with its card's figures (the /networks/ page)."""

    authentication_classes: list = []
    permission_classes: list = []

    @extend_schema(operation_id="list_networks", description="Every registered network: what it is, whether a job "
                   "may use it, its measured figures (from its model card) and the rule that picks the default.",
                   responses={200: schema.NetworkList})
    def get(self, request):
        return Response({"networks": [network_json(n, request.build_absolute_uri) for n in Network.objects.all()],
                         "default_rule": DEFAULT_RULE})


class SubmitJob(APIView):
    """POST /api/jobs/: the home form's fields as JSON or form data; 201 with the job's links. The
    contract (``webapp.api.submission``, the schema) is checked first (400), then the form (422)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="submit_job", request=submission.REQUEST, examples=schema.SUBMISSION_EXAMPLES,
        description="Submit a game (PGN) or a position (FEN) for analysis: the home page's form fields, as JSON, "
                    "form data or multipart; exactly one of `pgn` and `fen`. Needs a token (`Authorization: Token "
                    "...`) or a signed-in session with its CSRF token. 201 with the job's links; a refused "
                    "submission saves nothing.",
        responses={201: schema.JobLinks,
                   400: schema.error("The body breaks this schema (a field of the wrong type or out of its bounds, "
                                     "not exactly one of pgn and fen, an unknown search, malformed JSON); nothing "
                                     "is saved."),
                   401: schema.error("No credentials, or a token that is not valid."),
                   403: schema.error("A browser session without Django's CSRF token."),
                   413: schema.error("The PGN or the request body is over its limit."),
                   410: schema.error("The network named was withdrawn by an admin or retired by serve (the "
                                     "reason); nothing is saved."),
                   415: schema.error("A content type other than JSON, a form or multipart."),
                   422: schema.error("Well-formed, but not a game the site can analyse as asked: an unreadable game "
                                     "or FEN, an unknown network, a budget outside its search's own range, a search "
                                     "the network cannot run, a PGN of several games without game_index; nothing "
                                     "is saved."),
                   503: schema.error("The analysis queue is unavailable; nothing was started. See Retry-After.")})
    def post(self, request):
        wrong_types = _json_type_errors(request.data)
        if wrong_types:
            return Response({"error": next(iter(wrong_types.values()))[0], "errors": wrong_types}, status=400)
        breaches = submission.contract_errors(request.data)
        if breaches:
            return Response({"error": next(iter(breaches.values()))[0], "errors": breaches}, status=400)
        form = AnalyseForm(_form_data(request.data))
        if not form.is_valid():  # within the contract, so the form's refusal is of what was asked (422)
            # the form's own word where it is not "does not fit": too large (413), a network out of service (410)
            return Response(_form_errors(form), status=form.status_code if form.status_code in (410, 413) else 422)
        try:
            job = create_job(form.tree, form.cleaned_data["network"], form.cleaned_data["search"],
                             form.cleaned_data["budget"], engine_nodes=form.cleaned_data["engine_nodes"])
        except BrokerUnavailable:
            return Response({"error": "The analysis queue is unavailable right now, so nothing was started. "
                                      "Please try again in a minute."}, status=503, headers={"Retry-After": "30"})
        remember_owner(request, job)
        links = _job_links(request, job)
        return Response(links, status=status.HTTP_201_CREATED, headers={"Location": links["api"]})


TEXT_FIELDS = ("pgn", "fen", "network", "search")
NUMBER_FIELDS = ("budget", "game_index", "engine_nodes")


def _json_type_errors(data) -> dict[str, list[str]]:
    """A JSON body's fields of the wrong JSON type, by name (a form post's fields are all text,
    which the form reads). A field sent as null counts as not sent."""
    if isinstance(data, QueryDict):
        return {}
    if not isinstance(data, dict):
        return {"body": ["The JSON body must be an object of the submission's fields (pgn or fen, network, "
                         "search, budget, game_index, engine_nodes)."]}
    errors = {}
    for name in TEXT_FIELDS:
        if data.get(name) is not None and not isinstance(data[name], str):
            errors[name] = [f"{name} must be a JSON string."]
    for name in NUMBER_FIELDS:
        value = data.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            errors[name] = [f"{name} must be a whole number (a JSON integer)."]
    return errors


def _form_data(data) -> QueryDict:
    """The submitted fields as the form reads them (JSON numbers become text, as a form post sends)."""
    form_data = QueryDict(mutable=True)
    for name in SUBMIT_FIELDS:
        value = data.get(name)
        if value is not None:
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


class JobState(OpenRead):
    """GET /api/jobs/<id>/: the game page's own endpoint (``webapp.jobs.state``), described here."""

    @extend_schema(operation_id="read_job", description="A job's state: its status and progress, every position "
                   "of its game tree and the results known so far (what the game page shows).", responses={200: schema.JobState, 404: schema.NOT_FOUND})
    def get(self, request, job_id: str):
        return JsonResponse(job_state(get_job_or_404(job_id), request.build_absolute_uri))


class PositionDetail(OpenRead):
    """GET /api/jobs/<id>/nodes/<n>/: one position of a job with what is known about it."""

    @extend_schema(operation_id="read_position", description="One position of a job: its node, its results and "
                   "the evaluation in centipawns (or mate) for White.", responses={200: schema.Position, 404: schema.NOT_FOUND})
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
