"""The JSON API: submit a game, read a job (``analyses.views.job_state``), read a position,
read an attention layer (``analyses.views.attention``). Its OpenAPI schema is served at
``/api/schema/`` (drf-spectacular, from the ``extend_schema`` notes here and ``webapp.api.schema``).

Submitting needs an account: a token (``Authorization: Token ...``, for scripts) or a signed-in
browser session, which Django REST framework holds to Django's CSRF check. Reading is open,
as the game page is, to anyone with a job's id. Every error is ``{"error": message}`` with a
4xx status (``webapp.api.errors``); a refused submission saves nothing.
"""

from __future__ import annotations

from django.http import QueryDict
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.analyses import lc0_requests
from webapp.analyses import views as analyses_views
from webapp.analyses.export import position_score
from webapp.analyses.forms import AnalyseForm
from webapp.analyses.gameinput import board_for
from webapp.analyses.jobs import BrokerUnavailable, create_job, get_job_or_404
from webapp.analyses.ownership import remember_owner
from webapp.analyses.results import job_results
from webapp.api import schema
from webapp.networks.figures import DEFAULT_RULE
from webapp.networks.models import Network
from webapp.networks.summary import network_json

SUBMIT_FIELDS = ("pgn", "fen", "network", "search", "budget", "game_index", "engine_nodes")


class ApiIndex(APIView):
    """GET /api/: where the OpenAPI schema is and where to submit."""

    authentication_classes: list = []
    permission_classes: list = []

    @extend_schema(operation_id="api_index", description="Where the OpenAPI schema is and where to submit.",
                   responses={200: schema.Index})
    def get(self, request):
        return Response({"schema": request.build_absolute_uri(reverse("api_schema")),
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
    """POST /api/jobs/: the home form's fields as JSON or form data; 201 with the job's links."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="submit_job", request=schema.Submission, examples=schema.SUBMISSION_EXAMPLES,
        description="Submit a game (PGN) or a position (FEN) for analysis: the home page's form fields, as JSON, "
                    "form data or multipart. Needs a token (`Authorization: Token ...`) or a signed-in session "
                    "with its CSRF token. 201 with the job's links; a refused submission saves nothing.",
        responses={201: schema.JobLinks,
                   400: schema.error("The input is refused (a bad game, FEN, network, search, budget or engine budget; "
                                     "malformed JSON); nothing is saved."),
                   401: schema.error("No credentials, or a token that is not valid."),
                   403: schema.error("A browser session without Django's CSRF token."),
                   413: schema.error("The PGN or the request body is over its limit."),
                   415: schema.error("A content type other than JSON, a form or multipart."),
                   503: schema.error("The analysis queue is unavailable; nothing was started. See Retry-After.")})
    def post(self, request):
        wrong_types = _json_type_errors(request.data)
        if wrong_types:
            return Response({"error": next(iter(wrong_types.values()))[0], "errors": wrong_types}, status=400)
        form = AnalyseForm(_form_data(request.data))
        if not form.is_valid():
            return Response(_form_errors(form), status=form.status_code)
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


class OpenRead(APIView):
    """Reading: open to anyone with a job's id, as the game page is."""

    authentication_classes: list = []
    permission_classes: list = []


class JobState(OpenRead):
    """GET /api/jobs/<id>/: the game page's own endpoint (``analyses.views.job_state``), described here."""

    @extend_schema(operation_id="read_job", description="A job's state: its status and progress, every position "
                   "of its game tree and the results known so far (what the game page shows).", responses={200: schema.JobState, 404: schema.NOT_FOUND})
    def get(self, request, job_id: str):
        return analyses_views.job_state(request._request, job_id)


class Attention(OpenRead):
    """GET /api/jobs/<id>/nodes/<n>/attention/: the game page's attention endpoint
    (``analyses.views.attention``), described here."""

    @extend_schema(
        operation_id="read_attention_layer",
        description="One layer of a position's attention maps, for a network that has them; 202 while a worker "
                    "computes them (asking queues the work once).",
        parameters=[OpenApiParameter("layer", int, description="Which layer (from 0); default 0."),
                    OpenApiParameter("retry", str, enum=["1"], description="1: queue a failed computation again.")],
        responses={200: schema.AttentionLayer,
                   202: OpenApiResponse(schema.Pending, description="A worker computes the maps; ask again after "
                                                                    "Retry-After."),
                   400: schema.error("layer is not a number or not one of the network's layers."),
                   404: schema.error("No such job or position, or the network has no attention maps."),
                   429: schema.error("Too many new computations asked for; see Retry-After."),
                   503: schema.error("Computing the maps failed, or the queue is unavailable; see Retry-After.")})
    def get(self, request, job_id: str, node_id: int):
        return analyses_views.attention(request._request, job_id, node_id)


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


LENS_RESPONSES = {
    200: schema.LensAnswer,
    202: OpenApiResponse(schema.LensPending, description="A worker computes it; ask `poll` again after Retry-After."),
    400: schema.error("The request is refused (an unknown layer, unit or move, an illegal move, a scale outside "
                      "[-4, 4], a capability the network lacks: the reason); nothing is stored or queued."),
    404: schema.error("No such job or position."),
    429: schema.error("The analysis has too many lens computations queued; see Retry-After."),
    503: schema.error("Computing it failed (`retry`: ?retry=1 queues it again), or the queue is unavailable "
                      "and nothing was queued; see Retry-After.")}
RETRY = OpenApiParameter("retry", str, enum=["1"], description="1: queue a failed computation again.")


class Lc0Compare(OpenRead):
    @extend_schema(operation_id="compare_with_lc0",
                   description="lc0's own search of a position on the job's network beside Sightline's MCTS with the "
                               "same nodes (only for Lc0 networks lc0 can run); computed once per network, position "
                               "and nodes by a worker, then answered from the store.",
                   parameters=[OpenApiParameter("nodes", int, description="10 to 5000; default: the job's own nodes "
                                                                          "when it ran an MCTS within range, else 800."),
                               RETRY],
                   responses={200: schema.Lc0Comparison,
                              202: OpenApiResponse(schema.LensPending, description="A worker computes it; ask `poll` "
                                                                                  "again after Retry-After."),
                              400: schema.error("Refused (nodes out of range, a finished game, a network lc0 cannot "
                                                "run: the reason); nothing is stored or queued."),
                              404: schema.error("No such job or position."),
                              429: schema.error("Too many comparisons queued for this network; see Retry-After."),
                              503: schema.error("lc0 is not installed, or crashed or hung on the worker (`lc0`: "
                                                "\"unavailable\", `retry`: ?retry=1 tries again), or the queue is "
                                                "unavailable and nothing was queued.")})
    def get(self, request, job_id: str, node_id: int):
        return lc0_requests.compare(request._request, job_id, node_id)


class LensAbout(OpenRead):
    @extend_schema(operation_id="read_lens_capabilities", responses={200: schema.LensAbout, 404: schema.NOT_FOUND},
                   description="What the lens can take apart on the job's network: readout points, unit kinds and "
                               "what it lacks, with the reason.")
    def get(self, request, job_id: str, node_id: int):
        return analyses_views.lens_about(request._request, job_id, node_id)


class LogitLens(OpenRead):
    @extend_schema(operation_id="read_logit_lens", responses=LENS_RESPONSES,
                   description="The logit lens of a position: up to 4 moves' logit, probability and rank at every "
                               "readout point (default: the network's top 4), the top move and White's score per point.",
                   parameters=[OpenApiParameter("moves", str, description="Up to 4 UCI moves, comma-separated."), RETRY])
    def get(self, request, job_id: str, node_id: int):
        return analyses_views.lens(request._request, job_id, node_id, "lens")


class LensAblate(OpenRead):
    @extend_schema(operation_id="read_lens_ablation", responses=LENS_RESPONSES,
                   description="One unit's write scaled by `scale` (0 removes it, 1 is clean, 2 doubles, -1 flips): "
                               "the policy over the legal moves clean vs scaled, sorted by the change, and the score.",
                   parameters=[OpenApiParameter("unit", str, description="head (default), mlp, or the family's kind."),
                               OpenApiParameter("layer", int, required=True, description="From 0."),
                               OpenApiParameter("index", int, required=True, description="The head or unit, from 0."),
                               OpenApiParameter("scale", float, description="In [-4, 4]; default 0."), RETRY])
    def get(self, request, job_id: str, node_id: int):
        return analyses_views.lens(request._request, job_id, node_id, "ablate")


class LensGrid(OpenRead):
    @extend_schema(operation_id="read_lens_grid", responses=LENS_RESPONSES,
                   description="The causal head grid of a move: its logit change (and the score change) when each "
                               "head is removed in turn; `exact` marks figures measured by an ablated pass (big nets: "
                               "attribution ranks all, the top 16 are re-measured).",
                   parameters=[OpenApiParameter("move", str, required=True, description="A legal UCI move."),
                               OpenApiParameter("unit", str, description="head (default), mlp, ..."), RETRY])
    def get(self, request, job_id: str, node_id: int):
        return analyses_views.lens(request._request, job_id, node_id, "grid")


class LensSplit(OpenRead):
    @extend_schema(operation_id="read_lens_attention_split", responses=LENS_RESPONSES,
                   description="One layer's attention taken apart, for networks whose attention logits have a position "
                               "term (Chessformer relative_bias and Shaw, Lc0 with smolgen): `content` softmax(QK^T / "
                               "sqrt(D)) alone, `position` the logits the position term adds, `final` the network's own "
                               "map; each heads x 64 x 64 by real squares (query row first, a1 = 0), base64 of "
                               "little-endian float16. A network without the split is a 400 saying why.",
                   parameters=[OpenApiParameter("layer", int, description="From 0; default 0."), RETRY])
    def get(self, request, job_id: str, node_id: int):
        return analyses_views.lens(request._request, job_id, node_id, "split")
NEURON_UNIT = OpenApiParameter("unit", str, description="The unit kind with activations: mlp (default).")
NEURON_LAYER = OpenApiParameter("layer", int, required=True, description="From 0.")
NEURON_INDEX = OpenApiParameter("index", int, required=True, description="The unit in its layer, from 0.")
NEURON_TOP = OpenApiParameter("top", int, description="How many to list, 1 to 32.")


class LensNeurons(OpenRead):
    @extend_schema(operation_id="read_lens_neurons", responses=LENS_RESPONSES,
                   description="A layer's most active units on the position: `units` [{index, peak, square, mean}], "
                               "largest peak (over the squares) first.",
                   parameters=[NEURON_LAYER, NEURON_UNIT, NEURON_TOP, RETRY])
    def get(self, request, job_id: str, node_id: int):
        return analyses_views.lens(request._request, job_id, node_id, "neurons")


class LensNeuron(OpenRead):
    @extend_schema(operation_id="read_lens_neuron", responses=LENS_RESPONSES,
                   description="One unit's activation on every square: `map` (64 numbers, a1 first), its `peak` and "
                               "`square`. Refused for units without squares (Giraffe's).",
                   parameters=[NEURON_LAYER, NEURON_INDEX, NEURON_UNIT, RETRY])
    def get(self, request, job_id: str, node_id: int):
        return analyses_views.lens(request._request, job_id, node_id, "neuron")


class LensCarriers(OpenRead):
    @extend_schema(operation_id="read_lens_carriers", responses=LENS_RESPONSES,
                   description="Every unit's attribution to a move's logit (one backward pass); the `top` largest "
                               "|estimates| re-measured by exact ablation: `carriers` [{layer, index, attribution, "
                               "exact}] (`exact`: the measured logit change).",
                   parameters=[OpenApiParameter("move", str, required=True, description="A legal UCI move."),
                               NEURON_UNIT, NEURON_TOP, RETRY])
    def get(self, request, job_id: str, node_id: int):
        return analyses_views.lens(request._request, job_id, node_id, "carriers")


SCAN_RESPONSES = {**LENS_RESPONSES,
                  202: OpenApiResponse(schema.ScanPending, description="A worker scans the pool; `done` of `total` "
                                       "positions so far. Ask `poll` again after Retry-After."),
                  400: schema.error("The request is refused (an unknown layer or unit, a pool that is not atlas, game "
                                    "or fens, a bad FEN, more than 512 FENs, a capability the network lacks); nothing "
                                    "is stored or queued."),
                  404: schema.error("No such job, position or scan.")}


class LensWhereElse(OpenRead):
    @extend_schema(operation_id="read_lens_where_else", responses=SCAN_RESPONSES,
                   description="Where else a unit fires: its peak on every position of a pool (`atlas`: the head "
                               "atlas's 256 positions; `game`: this analysis's positions), scanned by a worker in "
                               "batches with progress. `top` [{index, fen, peak, square}], `mean` (its mean per "
                               "square), `scanned`, `skipped` (positions without a legal move). `?scan=KEY` (from a "
                               "202's `poll`) polls a scan.",
                   parameters=[NEURON_LAYER, NEURON_INDEX, NEURON_UNIT, NEURON_TOP,
                               OpenApiParameter("pool", str, enum=["atlas", "game"], description="Default atlas."),
                               OpenApiParameter("scan", str, description="Poll the scan with this key."), RETRY])
    def get(self, request, job_id: str, node_id: int):
        return analyses_views.neuron_scan(request._request, job_id, node_id)

    @extend_schema(operation_id="scan_lens_fens", responses={**SCAN_RESPONSES, 413: schema.error(
                       "The body is over 128 KiB.")}, request=schema.FenPool,
                   description="Where else a unit fires over an uploaded FEN list (JSON: layer, index, unit, top, "
                               "fens: a list of FENs or one text with a FEN a line; at most 512). 202 with the "
                               "`poll` URL, then 200 as for GET.")
    def post(self, request, job_id: str, node_id: int):
        return analyses_views.neuron_scan(request._request, job_id, node_id)
