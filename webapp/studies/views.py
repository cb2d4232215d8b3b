"""The studies' pages (controllers; the templates under templates/studies/ are the views): start a
study, a study's page (live progress, cancel, results, figures, drill-down, exports), its poll and
its exports. A study's page is open to anyone with its link, as a game's is."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from webapp.networks.models import Network
from webapp.networks.figures import SCALE_NOTE
from webapp.networks.picker import groups as picker_groups
from webapp.ondemand.refused import Refused
from webapp.studies import library, results, resume
from webapp.studies.forms import StudyForm
from webapp.studies.library import StudyInput
from webapp.studies.live import publish, state
from webapp.studies.models import Study
from webapp.studies.submit import may_cancel, start

CONTENT_TYPES = {"json": "application/json", "csv": "text/csv; charset=utf-8", "png": "image/png",
                 "svg": "image/svg+xml"}


def study_or_404(study_id: str) -> Study:
    try:
        study = Study.objects.select_related("network", "sparring").filter(pk=study_id).first()
    except ValidationError:
        study = None
    if study is None:
        raise Http404("No such study.")
    resume.requeue_if_lost(study)
    return study


def _index_context(form: StudyForm) -> dict:
    offered = Network.objects.offered().filter(status=Network.Status.READY)
    methods = _methods(offered)
    return {"form": form, "network_groups": picker_groups(offered), "elo_scale": SCALE_NOTE,
            "methods": methods, "methods_why_not": {m["name"]: m["why_not"] for m in methods},
            "sets": library.shipped_sets(),
            "sparring": offered, "recent": Study.objects.select_related("network")[:10]}


def _methods(networks) -> list[dict]:
    """Each method with, per network, why it does not apply ("" where it does): the picker's notes."""
    from analysis.lens.description import LensDescription

    found = []
    for name, title in library.method_choices():
        why = {n.name: library.why_not(name, LensDescription.from_json(n.lens_description or {})) or ""
               for n in networks}
        found.append({"name": name, "title": title, "why_not": why})
    return found


@require_http_methods(["GET", "POST"])
def index(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return render(request, "studies/index.html", _index_context(StudyForm()))
    form = StudyForm(request.POST, request.FILES)
    if not form.is_valid():
        return render(request, "studies/index.html", _index_context(form), status=400)
    try:
        study = start(request, form.request())
    except Refused as refused:
        form.add_error(None, refused.message)
        response = render(request, "studies/index.html", _index_context(form), status=refused.status)
        if refused.retry_after is not None:
            response["Retry-After"] = str(refused.retry_after)
        return response
    return redirect("study", study_id=study.pk)


@require_GET
def study_page(request: HttpRequest, study_id: str) -> HttpResponse:
    study = study_or_404(study_id)
    headers, rows = results.table((study.result or {}).get("summary") or {})
    drill_headers, drill_rows = results.drill_down(study)
    figures = []
    if study.status == Study.Status.DONE:
        full = results.full_result(study)
        figures = [{**f, "svg": library.export("svg", full, f["name"])} for f in results.figures(study)]
    return render(request, "studies/study.html", {
        "study": study, "state": state(study), "headers": headers, "rows": rows, "figures": figures,
        "drill_headers": drill_headers, "drill_rows": drill_rows, "may_cancel": may_cancel(request, study),
        "ws_path": f"/ws/studies/{study.pk}/", "state_url": reverse("study_state", args=[study.pk])})


@require_GET
def study_state(request: HttpRequest, study_id: str) -> JsonResponse:
    """The poll (the page's fallback without a websocket): 202 while queued or running, 200 once finished."""
    study = study_or_404(study_id)
    response = JsonResponse(state(study), status=200 if study.finished else 202)
    if not study.finished:
        response["Retry-After"] = "2"
    return response


def cancel(study: Study) -> bool:
    """Cancel a queued or running study (its worker stops after the position it is on); False when finished."""
    return bool(Study.objects.filter(pk=study.pk, status__in=Study.ACTIVE).update(status=Study.Status.CANCELLED))


@require_POST
def study_cancel(request: HttpRequest, study_id: str) -> HttpResponse:
    study = study_or_404(study_id)
    if not may_cancel(request, study):
        return JsonResponse({"error": "Only whoever started the study may cancel it."}, status=403)
    if not cancel(study):
        return JsonResponse({"error": f"The study is already {study.status}."}, status=409)
    study.refresh_from_db()
    publish(study)
    if request.headers.get("Accept", "").startswith("application/json"):
        return JsonResponse(state(study))
    return redirect("study", study_id=study.pk)


def export_response(study: Study, kind: str, figure: str | None = None) -> HttpResponse:
    """A finished study's export: JSON, CSV, or a figure as PNG or SVG (409 before it is done)."""
    if kind not in (("png", "svg") if figure is not None else ("json", "csv")):
        return JsonResponse({"error": f"No export as {kind!r}: " + ("png or svg." if figure else "json or csv.")},
                            status=404)
    if study.status != Study.Status.DONE:
        return JsonResponse({"error": f"The study is {study.status}; its exports come once it is done."},
                            status=409)
    try:
        body = library.export(kind, results.full_result(study), figure)
    except StudyInput as exc:
        return JsonResponse({"error": exc.message}, status=404)
    response = HttpResponse(body, content_type=CONTENT_TYPES[kind])
    stem = f"study-{study.pk}" + (f"-{figure}" if figure else "")
    response["Content-Disposition"] = f'attachment; filename="{stem}.{kind}"'
    return response


@require_GET
def study_export(request: HttpRequest, study_id: str, kind: str) -> HttpResponse:
    return export_response(study_or_404(study_id), kind)


@require_GET
def study_figure(request: HttpRequest, study_id: str, name: str, kind: str) -> HttpResponse:
    return export_response(study_or_404(study_id), kind, name)
