"""The studies' API views, described for the OpenAPI schema, routed under ``/api/studies/``
(``webapp.api.urls``). The schema is as strict as the site: a body that breaks it is a 400; one that
keeps it but does not fit (an unknown network or method, a method that does not apply to the network's
family, unreadable positions, settings the method does not take) a 422; a withdrawn network 410; over
the studies' limits 429; the queue down 503. A refusal saves nothing."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.api import schema
from webapp.api.openread import OpenRead
from webapp.api.parsers import CheckedJSONParser
from webapp.ondemand.refused import Refused
from webapp.studies import views
from webapp.studies.library import KINDS, MAX_LIMIT, MAX_SOURCE_BYTES, Source
from webapp.studies.models import Study, StudyItem
from webapp.studies.submit import StudyRequest, may_cancel, start

MAX_SEED = 2**31 - 1


class StudyPositions(serializers.Serializer):
    kind = serializers.ChoiceField(choices=KINDS, help_text="puzzles: a shipped set by `name`; csv (a Lichess "
                                   "puzzle CSV), pgn (every position of its games), fens (one a line): `text`.")
    name = serializers.CharField(required=False, min_length=1, max_length=100, help_text="The shipped set (kind puzzles).")
    text = serializers.CharField(required=False, min_length=1, max_length=MAX_SOURCE_BYTES, trim_whitespace=False,
                                 help_text="The positions' text (kinds csv, pgn, fens).")


class StudySubmission(serializers.Serializer):
    network = serializers.CharField(min_length=1, max_length=100, help_text="A network's name (GET /api/networks/).")
    method = serializers.CharField(min_length=1, max_length=32, help_text="A study method (lookahead, forgotten, ...).")
    positions = StudyPositions()
    settings = serializers.DictField(required=False, default=dict, help_text="The method's settings; a key it "
                                     "does not take is a 422.")
    seed = serializers.IntegerField(required=False, default=0, min_value=0, max_value=MAX_SEED)
    limit = serializers.IntegerField(required=False, default=None, allow_null=True, min_value=1, max_value=MAX_LIMIT)
    sparring = serializers.CharField(required=False, default="", allow_blank=True, max_length=100,
                                     help_text="The sparring network's name (lookahead).")

    def request(self) -> StudyRequest:
        d = self.validated_data
        p = d["positions"]
        source = Source(p["kind"], p.get("name", "") if p["kind"] == "puzzles" else "",
                        "" if p["kind"] == "puzzles" else p.get("text", ""), d.get("limit"))
        return StudyRequest(d["network"], d["method"], source, dict(d.get("settings") or {}), d["seed"],
                            d.get("sparring") or "")


class StudyState(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.ChoiceField(choices=Study.Status.choices)
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    network = serializers.CharField()
    method = serializers.CharField()
    seed = serializers.IntegerField()
    settings = serializers.DictField()
    positions = serializers.DictField(help_text="{kind, name, limit}")
    code_version = serializers.CharField()
    error = serializers.CharField()
    summary = serializers.DictField(allow_null=True, help_text="The method's summary once done: `table` (rows of "
                                    "named cells; intervals as {mean, se} or {score, low, high}), `figures`, ...")
    page = serializers.URLField()
    api = serializers.URLField()


class StudyItems(serializers.Serializer):
    items = serializers.ListField(child=serializers.DictField(), help_text="[{index, id, fen, result}] by index.")


def flat_errors(errors, prefix: str = "") -> dict[str, list[str]]:
    """A serializer's errors as {"positions.kind": [messages]}: the API's one error shape."""
    if isinstance(errors, dict):
        found: dict[str, list[str]] = {}
        for key, value in errors.items():
            found.update(flat_errors(value, f"{prefix}.{key}" if prefix else str(key)))
        return found
    if isinstance(errors, list) and all(not isinstance(e, (dict, list)) for e in errors):
        return {prefix or "body": [str(e) for e in errors]}
    found = {}
    for i, value in enumerate(errors if isinstance(errors, list) else [errors]):
        found.update(flat_errors(value, f"{prefix}[{i}]"))
    return found


def study_json(request, study: Study) -> dict:
    return {"id": str(study.pk), "status": study.status, "done": study.done, "total": study.total,
            "network": study.network.name, "method": study.method, "seed": study.seed, "settings": study.settings,
            "positions": {"kind": study.source_kind, "name": study.source_name, "limit": study.limit},
            "code_version": study.code_version, "error": study.error,
            "summary": (study.result or {}).get("summary"),
            "page": request.build_absolute_uri(f"/studies/{study.pk}/"),
            "api": request.build_absolute_uri(f"/api/studies/{study.pk}/")}


NOT_FOUND = schema.error("No such study.")


class SubmitStudy(APIView):
    """POST /api/studies/: start a study; 201 with its state and links."""

    permission_classes = [IsAuthenticated]
    parser_classes = [CheckedJSONParser]

    @extend_schema(operation_id="submit_study", request=StudySubmission, description=(
        "Start a study: a method run over a position set on one network, in a worker of its own. JSON only. "
        "Needs a token or a signed-in session with its CSRF token. 201 with the study's state and links."),
        responses={201: StudyState,
                   400: schema.error("The body breaks this schema; nothing is saved."),
                   401: schema.error("No credentials, or a token that is not valid."),
                   403: schema.error("A browser session without Django's CSRF token."),
                   409: schema.error("The network is still being checked."),
                   410: schema.WITHDRAWN,
                   415: schema.error("A content type other than JSON."),
                   422: schema.error("Well-formed, but not a study the site can run: an unknown network or method, "
                                     "a method that does not apply to the network (why not), unreadable positions, "
                                     "settings the method does not take; nothing is saved."),
                   429: schema.error("You (or the site) run as many studies as allowed at a time; see Retry-After."),
                   503: schema.error("The studies' queue is unavailable; nothing was started.")})
    def post(self, request):
        if not isinstance(request.data, dict):
            return Response({"error": "The JSON body must be an object: network, method, positions, ..."},
                            status=400)
        submission = StudySubmission(data=request.data)
        if not submission.is_valid():
            errors = flat_errors(submission.errors)
            field, messages = next(iter(errors.items()))
            return Response({"error": f"{field}: {messages[0]}", "errors": errors}, status=400)
        try:
            study = start(request._request, submission.request())
        except Refused as refused:
            return refused.json()
        body = study_json(request, study)
        return Response(body, status=status.HTTP_201_CREATED, headers={"Location": body["api"]})


class StudyDetail(OpenRead):
    @extend_schema(operation_id="read_study", responses={200: StudyState, 404: NOT_FOUND},
                   description="A study: its status and progress, and its summary once done.")
    def get(self, request, study_id: str):
        return Response(study_json(request, views.study_or_404(study_id)))


class StudyItemList(OpenRead):
    @extend_schema(operation_id="read_study_items", responses={200: StudyItems, 404: NOT_FOUND},
                   description="Every position measured so far, with its result.")
    def get(self, request, study_id: str):
        study = views.study_or_404(study_id)
        items = [{"index": i.index, "id": study.position(i.index, i.result)[0],
                  "fen": study.position(i.index, i.result)[1], "result": i.result}
                 for i in StudyItem.objects.filter(study=study).order_by("index")]
        return Response({"items": items})


class CancelStudy(APIView):
    parser_classes = [JSONParser]

    @extend_schema(operation_id="cancel_study", request=None, responses={
        200: OpenApiResponse(StudyState, description="Cancelled: the worker stops after the position it is on."),
        403: schema.error("Only whoever started the study may cancel it."),
        404: NOT_FOUND, 409: schema.error("The study is already finished.")},
        description="Cancel a queued or running study (who started it only); its stored items are kept.")
    def post(self, request, study_id: str):
        study = views.study_or_404(study_id)
        if not may_cancel(request._request, study):
            return Response({"error": "Only whoever started the study may cancel it."}, status=403)
        if not views.cancel(study):
            return Response({"error": f"The study is already {study.status}."}, status=409)
        study.refresh_from_db()
        views.publish(study)
        return Response(study_json(request, study))


EXPORT = {200: OpenApiResponse(description="The file."), 404: schema.error("No such study, figure or kind."),
          409: schema.error("The study is not done yet.")}


class StudyExport(OpenRead):
    @extend_schema(operation_id="export_study", responses=EXPORT,
                   parameters=[OpenApiParameter("kind", str, OpenApiParameter.PATH, enum=["json", "csv"])],
                   description="The whole result: JSON (run_study's answer) or CSV (one row per position).")
    def get(self, request, study_id: str, kind: str):
        return views.export_response(views.study_or_404(study_id), kind)


class StudyFigure(OpenRead):
    @extend_schema(operation_id="read_study_figure", responses=EXPORT,
                   parameters=[OpenApiParameter("kind", str, OpenApiParameter.PATH, enum=["png", "svg"])],
                   description="One of the summary's figures as PNG or SVG (its `name` from `summary.figures`).")
    def get(self, request, study_id: str, name: str, kind: str):
        return views.export_response(views.study_or_404(study_id), kind, name)


