"""Pages and small JSON endpoints."""

from __future__ import annotations

import json

import chess.svg
from django.conf import settings
from django.core.exceptions import NON_FIELD_ERRORS, RequestDataTooBig
from django.forms.utils import ErrorDict
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.shortcuts import redirect, render
from django.urls import Resolver404, reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from analysis.evaluator import WIN_PERCENT_SLOPE
from webapp.jobs.estimates import engine_estimate, estimate
from webapp.jobs.forms import ENGINE_MAX_NODES, ENGINE_MIN_NODES, PGN_LIMITS, AnalyseForm, engine_budget_allowed
from webapp.jobs.jobs import cancel_job, create_job, get_job_or_404
from webapp.jobs.judgements import legend as judgement_legend
from webapp.jobs.judgements import short_legend
from webapp.jobs import deeper, engine_deeper
from webapp.jobs.live.messages import Nodes, job_snapshot, review_parts
from webapp.jobs.models import AnalysisJob, DeepSearch
from webapp.jobs.openings import game_opening
from webapp.jobs.panels import panel_settings
from webapp.jobs.queue_wait import waiting_sentence
from webapp.jobs.review import engine_legend
from webapp.jobs.ownership import owner_only, owns, remember_owner, visible_jobs
from webapp.jobs.searches import SEARCHES
from webapp.jobs.variations import add_line
from webapp.networks.atlas import ready_atlas
from webapp.networks.figures import SCALE_NOTE
from webapp.networks.lookup import in_service, out_of_service, withdrawal
from webapp.networks.models import Network
from webapp.networks.picker import groups as picker_groups
from webapp.ondemand.clients import client_key
from webapp.ondemand.refused import Refused
from workers.dispatch import BrokerUnavailable

RECENT = 12


def _recent_jobs(request: HttpRequest):
    """The visitor's own jobs and shared ones (``ownership.visible_jobs``), newest first."""
    return visible_jobs(request).select_related("network").only(
        "id", "status", "headers", "start_fen", "search", "budget", "created_at", "total_positions",
        "evaluated", "shared", "network__name", "network__trained", "network__kind")[:RECENT]


def _home_context(request: HttpRequest, form: AnalyseForm) -> dict:
    """The form and its choices: the networks in the picker's groups (``networks.picker``), the ablations'
    variants in their own groups after them."""
    return {"form": form, "network_groups": picker_groups(Network.objects.offered()),
            "elo_scale": SCALE_NOTE,
            "searches": list(SEARCHES.values()), "recent": _recent_jobs(request)}


@require_http_methods(["GET", "POST"])
def home(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return render(request, "analyses/home.html", _home_context(request, AnalyseForm()))
    try:
        data, files = request.POST, request.FILES
    except RequestDataTooBig:
        return _too_big(request)
    form = AnalyseForm(data, files)
    if not form.is_valid():
        return render(request, "analyses/home.html", _home_context(request, form), status=form.status_code)
    try:
        job = create_job(form.tree, form.cleaned_data["network"], form.cleaned_data["search"],
                         form.cleaned_data["budget"], engine_nodes=form.cleaned_data["engine_nodes"])
    except BrokerUnavailable:
        return _unavailable(request, form)
    remember_owner(request, job)
    url = reverse("job", args=[job.id])
    if request.htmx:
        response = HttpResponse(status=204)
        response["HX-Redirect"] = url
        return response
    return redirect(url, permanent=False)


@require_GET
def cost_estimate(request: HttpRequest) -> JsonResponse:
    """``?network=&search=&budget=&engine_nodes=`` -> {"seconds_per_position", "basis", "engine"} for the home
    form; "engine" is Stockfish's share beside the network (null when ``engine_nodes`` is 0; blank: the
    site's default budget)."""
    name, search, budget = (request.GET.get(k, "") for k in ("network", "search", "budget"))
    network = Network.objects.filter(name=name).first()
    refusal = out_of_service(network) if network is not None else None
    if refusal is not None:
        return refusal.json()
    if network is None or network.status != Network.Status.READY:
        return JsonResponse({"error": f"Unknown network {name[:64]!r}."}, status=400)
    spec = SEARCHES.get(search)
    if spec is None:
        return JsonResponse({"error": f"Unknown search {search[:32]!r}; choose one of {', '.join(SEARCHES)}."},
                            status=400)
    if spec.fixed:
        budget = str(spec.budget_min)
    budget = _whole(budget)
    if budget is None or not spec.budget_min <= budget <= spec.budget_max:
        return JsonResponse({"error": f"budget must be a whole number from {spec.budget_min} to {spec.budget_max}."},
                            status=400)
    engine_nodes = _whole(request.GET.get("engine_nodes", "").strip() or str(settings.SIGHTLINE_ENGINE_NODES))
    if engine_nodes is None or not engine_budget_allowed(engine_nodes):
        return JsonResponse({"error": f"engine_nodes must be 0 (no engine) or a whole number from {ENGINE_MIN_NODES:,} "
                                      f"to {ENGINE_MAX_NODES:,}."}, status=400)
    engine = engine_estimate(engine_nodes)
    return JsonResponse({**estimate(network, search, budget).as_dict(), "engine": engine.as_dict() if engine else None})


def _whole(text: str) -> int | None:
    """ASCII digits only ("²" is a digit to isdigit, not to int) and short (int() refuses 4,300 digits)."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 9 else None


@require_GET
def recent(request: HttpRequest) -> HttpResponse:
    return render(request, "analyses/_recent.html", {"recent": _recent_jobs(request)})


def _piece_defs() -> str:
    """SVG <defs> for the pieces, from python-chess's installed board renderer."""
    return "".join(chess.svg.PIECES.values())


@require_GET
def job_page(request: HttpRequest, job_id: str) -> HttpResponse:
    job = get_job_or_404(job_id)
    caps = job.network.caps
    page = {
        "id": str(job.id), "nodes": job.nodes, "headers": job.headers, "snapshot": job_snapshot(job),
        "root_label": job.root_label,
        "network": {"name": job.network.name, "has_wdl": caps.wdl, "has_policy": caps.policy,
                    "has_attention": caps.attention is not None, "attention": caps.attention,
                    "attention_support": caps.attention_support,
                    "untrained": job.network.is_untrained, "head_labels": _head_labels(job.network)},
        "search": {"name": job.search, "budget": job.budget, "unit": SEARCHES[job.search].budget_unit
                   if job.search in SEARCHES else ""},
        "estimate": estimate(job.network, job.search, job.budget).as_dict() if job.search in SEARCHES else None,
        "deeper": _deeper_settings(job),
        "engine_deeper": engine_deeper.page_settings(),
        **panel_settings(job),  # the feature apps' panels (webapp.jobs.panels): "lc0"
        "can_cancel": owns(request, job),
        "can_add_moves": owns(request, job),
        "win_percent_slope": WIN_PERCENT_SLOPE,  # the page's centipawn figures use the library's formula
        "urls": {"ws": f"/ws/jobs/{job.id}/", "state": reverse("job_state", args=[job.id]),
                 "review": reverse("job_review", args=[job.id]), "wait": reverse("job_wait", args=[job.id]),
                 "nodes": f"/api/jobs/{job.id}/nodes/", "moves": reverse("job_moves", args=[job.id]),
                 "deeper": reverse("job_deeper", args=[job.id]),
                 "engine_deeper": reverse("job_engine_deeper", args=[job.id]), "board_svg": f"/jobs/{job.id}/nodes/",
                 "lc0": f"/jobs/{job.id}/nodes/",  # + <node>/lc0/?nodes=N (webapp/lc0compare/views.py)
                 "heads_show": reverse("head_show", args=[job.network.name]),
                 "atlas": reverse("head_atlas", args=[job.network.name])},
    }
    valuer = "the material count" if job.network.kind == Network.Kind.MATERIAL else "the network"
    return render(request, "analyses/job.html", {"job": job, "network": job.network, "page": page,
                                                  "withdrawn": withdrawal(job.network),
                                                  "owner": page["can_cancel"], "opening": game_opening(job.start_fen, job.nodes),
                                                  "piece_defs": _piece_defs(),
                                                  "judgement_legend": judgement_legend(job.search, valuer),
                                                  "judgement_legend_short": short_legend(job.search, valuer),
                                                  "engine_legend": engine_legend()})


def _deeper_settings(job) -> dict | None:
    """What the "Analyse deeper" control offers: None for a search without a budget."""
    spec = SEARCHES.get(job.search)
    if spec is None or spec.fixed:
        return None
    return {"default": deeper.default_budget(job.search, job.budget), "unit": spec.budget_unit,
            "min": spec.budget_min, "max": spec.budget_max, "until_stopped": spec.budget_unit == "nodes",
            "max_seconds": deeper.MAX_SECONDS}


def _head_labels(network: Network) -> list[list[str]] | None:
    """The head atlas's labels (layers x heads) for the explorer's head picker, once computed."""
    atlas = ready_atlas(network) if network.caps.attention else None
    return atlas.labels if atlas else None


@require_GET
def job_review(request: HttpRequest, job_id: str) -> JsonResponse:
    """The game review, the disagreement list and the swing flag (``messages.review_parts``)."""
    return JsonResponse(review_parts(get_job_or_404(job_id)))


@require_GET
def job_wait(request: HttpRequest, job_id: str) -> JsonResponse:
    """A queued job's status and its wait in words (``queue_wait``): what the page asks again while the
    job waits, since nothing is pushed then (the whole state is for filling gaps, not for this)."""
    job = get_job_or_404(job_id)
    return JsonResponse({"status": job.status, "waiting": waiting_sentence(job)})


@require_POST
@owner_only("cancel it")
def job_cancel(request: HttpRequest, job: AnalysisJob) -> HttpResponse:
    if not cancel_job(job):
        return JsonResponse({"error": f"The analysis is already {job.status}."}, status=409)
    from webapp.jobs.live.publish import publish_status

    job.refresh_from_db()
    publish_status(job)
    if request.htmx or request.headers.get("Accept", "").startswith("application/json"):
        return JsonResponse({"status": job.status})
    return redirect("job", job_id=job.id)


@require_POST
@owner_only("add moves to it")
def job_moves(request: HttpRequest, job: AnalysisJob) -> JsonResponse:
    """Add a line played on the board: JSON ``{"parent": node id, "moves": ["e2e4", ...]}``.

    Answers ``{"node": the line's last node, "nodes": the new nodes}``; the job analyses them
    (``webapp.jobs.variations``). Owners only, as for cancelling."""
    try:
        body = _json_body(request, '{"parent": 0, "moves": ["e2e4"]}')
        added = add_line(job, body.get("parent"), body.get("moves"))
    except Refused as refused:
        return refused.json()
    if added.created:
        from webapp.jobs.live.publish import GroupPublisher

        Nodes(added.created).send(GroupPublisher(job.id))  # other viewers of the job add them too
    return JsonResponse({"node": added.node, "nodes": added.created, "requeued": added.requeued},
                        status=201 if added.created else 200)


def _json_body(request: HttpRequest, example: str) -> dict:
    try:
        body = json.loads(request.body or b"")
    except (ValueError, RecursionError):
        body = None
    if not isinstance(body, dict):
        raise Refused(f"The body must be a JSON object: {example}.")
    return body


@require_POST
@owner_only("run a deeper search on it")
def job_deeper(request: HttpRequest, job: AnalysisJob) -> JsonResponse:
    """Start "analyse this position deeper": JSON ``{"node": id, "budget": n or "until-stopped"}``."""
    try:
        in_service(job.network)
        body = _json_body(request, '{"node": 0, "budget": 2000}')
        deep = deeper.start(job, body.get("node"), body.get("budget"))
    except Refused as refused:
        return refused.json()
    except BrokerUnavailable as exc:
        return Refused.broker_down(exc, "the deeper search").json()
    return JsonResponse({"deep": deep.pk, "node": deep.node_id, "budget": deep.budget,
                         "stop": reverse("job_deeper_stop", args=[job.id, deep.pk])}, status=202)


@require_POST
@owner_only("stop its deeper search")
def job_deeper_stop(request: HttpRequest, job: AnalysisJob, deep_id: int) -> JsonResponse:
    deep = DeepSearch.objects.filter(pk=deep_id, job=job).first()
    if deep is None:
        return JsonResponse({"error": f"This analysis has no deeper search {deep_id}."}, status=404)
    if not deeper.stop(deep):
        return JsonResponse({"error": f"The deeper search has already ended ({deep.status})."}, status=409)
    return JsonResponse({"status": "stopping"})


def _client(request: HttpRequest) -> str:
    """Who asks (``webapp.ondemand.clients``; a browser without a session gets one now, so that it
    alone may stop its search): the deeper engine's limits are per client."""
    if not request.session.session_key:
        request.session.save()
    return client_key(request)


@require_POST
def job_engine_deeper(request: HttpRequest, job_id: str) -> JsonResponse:
    """Start "go deeper" with Stockfish, for anyone viewing the job: JSON ``{"node": id, "lines": 1-5,
    "budget": nodes or "until-stopped"}``."""
    job = get_job_or_404(job_id)
    try:
        body = _json_body(request, '{"node": 0, "lines": 3, "budget": 5000000}')
        deep = engine_deeper.start(job, _client(request), body.get("node"), body.get("lines"), body.get("budget"))
    except Refused as refused:
        return refused.json()
    except BrokerUnavailable as exc:
        return Refused.broker_down(exc, "the deeper engine").json()
    return JsonResponse({"deep": deep.pk, "node": deep.node_id, "lines": deep.lines, "budget": deep.budget,
                         "stop": reverse("job_engine_deeper_stop", args=[job.id, deep.pk])}, status=202)


@require_POST
def job_engine_deeper_stop(request: HttpRequest, job_id: str, deep_id: int) -> JsonResponse:
    job = get_job_or_404(job_id)
    try:
        engine_deeper.stop(job, deep_id, _client(request), owns(request, job))
    except Refused as refused:
        return refused.json()
    return JsonResponse({"status": "stopping"})


def _form_error(request: HttpRequest, message: str, status: int) -> HttpResponse:
    """The home page with ``message`` above the form, for a body the form never got to read."""
    form = AnalyseForm()  # unbound (the body cannot be read), so add_error() is not available
    form._errors = ErrorDict({NON_FIELD_ERRORS: form.error_class([message], error_class="nonfield")})
    return render(request, "analyses/home.html", _home_context(request, form), status=status)


def _too_big(request: HttpRequest) -> HttpResponse:
    return _form_error(request, f"The request is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes. "
                                f"{PGN_LIMITS}", 413)


def _unreadable_form_message(exception: MultiPartParserError) -> str:
    return (f"The form data could not be read ({exception}). Send it as multipart/form-data with a "
            f"boundary, or as application/x-www-form-urlencoded.")


def _unavailable(request: HttpRequest, form: AnalyseForm) -> HttpResponse:
    """503: the job queue (Redis) is down; nothing was saved, and the form keeps what was entered."""
    form.add_error(None, "The analysis queue is unavailable right now, so nothing was started. "
                         "Please try again in a minute.")
    response = render(request, "analyses/home.html", _home_context(request, form), status=503)
    response["Retry-After"] = "30"
    return response


def bad_request(request: HttpRequest, exception=None) -> HttpResponse:
    """400 handler. An oversized or malformed body is usually first read by the CSRF middleware,
    so it ends here rather than in ``home``: answer it with the form and what is wrong."""
    if isinstance(exception, RequestDataTooBig):
        return _too_big(request)
    message = _unreadable_form_message(exception) if isinstance(exception, MultiPartParserError) else "Bad request."
    if request.path.startswith("/api/"):
        return JsonResponse({"error": message}, status=400)
    if isinstance(exception, MultiPartParserError) and request.path == reverse("home"):
        return _form_error(request, message, 400)
    return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")


def not_found(request: HttpRequest, exception=None) -> HttpResponse:
    message = _not_found_message(exception)
    if request.path.startswith("/api/"):
        return JsonResponse({"error": message}, status=404)
    return render(request, "404.html", {"message": message}, status=404)


def _not_found_message(exception) -> str:
    """A view's own Http404 message; never the URL resolver's, whose text lists every route."""
    if (isinstance(exception, Http404) and not isinstance(exception, Resolver404) and exception.args
            and isinstance(exception.args[0], str) and exception.args[0]):
        return exception.args[0]
    return "There is nothing at this address."
