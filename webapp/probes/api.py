"""The probes' API, routed under ``/api/networks/<name>/concepts/`` (``webapp.api.urls``), as strict
as the site: a body or query that breaks the schema is a 400; a FEN that is not a legal position, or
a network whose family has no readout points, a 422; an unknown network 404; a withdrawn one 410
(new work only); over the on-demand limits 429; the queue down or a failed computation 503."""

from __future__ import annotations

from django.http import JsonResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers

from analysis.positions import board_from_input
from webapp.api import schema
from webapp.api.openread import RETRY, OpenRead
from webapp.api.parsers import CheckedJSONParser
from webapp.networks.lookup import out_of_service, withdrawal
from webapp.networks.models import Network
from webapp.ondemand.limits import LIMITS
from webapp.ondemand.refused import Refused
from webapp.ondemand.serve import OnDemand, failed, pending
from webapp.probes.atlas import is_stale, ready_row, request_atlas, summary, why_not
from webapp.probes.models import ConceptAtlas, ConceptScores
from workers.dispatch import BrokerUnavailable

MAX_FEN = 100
SCORES = OnDemand(ConceptScores, "sightline.compute_concept_scores", LIMITS["probes"], "these concept scores")


class AtlasAnswer(serializers.Serializer):
    network = serializers.CharField()
    version = serializers.IntegerField()
    points = serializers.ListField(child=serializers.CharField(), help_text="Readout points in forward order.")
    settings = serializers.DictField()
    concepts = serializers.DictField(help_text="Per concept: kind, metric, balance, size, trained and untrained "
                                     "[{score, low, high} or null per point], input, best_point, selectivity; or "
                                     "{why} when its positions cannot make a balanced set.")


class AtlasPending(serializers.Serializer):
    status = serializers.ChoiceField(choices=["queued", "running"])
    done = serializers.IntegerField()
    total = serializers.IntegerField()


class Fen(serializers.Serializer):
    fen = serializers.RegexField(r"\S", max_length=MAX_FEN, help_text="The position (a legal FEN).")


class PositionAnswer(serializers.Serializer):
    points = serializers.ListField(child=serializers.CharField())
    concepts = serializers.ListField(child=serializers.DictField(), help_text="Per concept: name, kind, about, "
                                     "best_point, strip (a score per point: a probability, or a regression's "
                                     "prediction; a square concept's highest square), label (the true value), "
                                     "squares (a square concept's 64 probabilities a1 first per point, null off "
                                     "its candidate squares).")


def _error(message: str, status: int) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


def _network(name: str):
    network = Network.objects.filter(name=name).first()
    return network, None if network else _error(f"Unknown network {name!r}.", 404)


def _atlas_state(network: Network) -> JsonResponse:
    """200 with the ready atlas, 202 while it is computed, 409 when none was asked for, 503 failed."""
    row = ConceptAtlas.objects.filter(network=network).first()
    if row is None or is_stale(row):
        return _error(f"{network.name} has no concept atlas yet: POST to this address computes it.", 409)
    if row.status == ConceptAtlas.Status.READY:
        return JsonResponse(summary(row))
    if row.status == ConceptAtlas.Status.FAILED:
        return _error(f"Computing the concept atlas failed ({row.error}); POST to compute it again.", 503)
    response = JsonResponse({"status": row.status, "done": row.done, "total": row.total}, status=202)
    response["Retry-After"] = "2"
    return response


ATLAS_RESPONSES = {200: AtlasAnswer, 202: OpenApiResponse(AtlasPending, description="A background worker "
                                                          "computes it; ask again after Retry-After."),
                   404: schema.error("No such network."),
                   409: schema.error("No atlas was asked for yet (GET), or the network is not ready (POST)."),
                   410: schema.WITHDRAWN,
                   422: schema.error("The network's family has no readout points to probe (the reason)."),
                   503: schema.error("Computing it failed, or the queue is unavailable; see Retry-After.")}


class ConceptAtlasView(OpenRead):
    @extend_schema(operation_id="read_concept_atlas", responses=ATLAS_RESPONSES,
                   description="A network's concept atlas: per concept its probe at every readout point, trained, "
                               "untrained and on the input planes, with bootstrap 95% intervals, the best point and "
                               "the selectivity there.")
    def get(self, request, name: str):
        network, missing = _network(name)
        if missing:
            return missing
        why = why_not(network)
        return _error(why, 422) if why else _atlas_state(network)

    @extend_schema(operation_id="compute_concept_atlas", request=None, responses=ATLAS_RESPONSES,
                   description="Queue the network's concept atlas on the background lane (once; again after a "
                               "failure or a new rule); answers as GET.")
    def post(self, request, name: str):
        network, missing = _network(name)
        if missing:
            return missing
        why = why_not(network)
        if why:
            return _error(why, 422)
        refusal = out_of_service(network)
        if refusal is not None:
            return refusal.json()
        if network.status != Network.Status.READY:
            return _error(f"{network.name} is not ready yet.", 409)
        try:
            request_atlas(network)
        except BrokerUnavailable as exc:
            return Refused.broker_down(exc, "the concept atlas").json()
        return _atlas_state(network)


POSITION_RESPONSES = {200: PositionAnswer, 202: OpenApiResponse(schema.Pending, description="A worker computes "
                                                                "it; ask again after Retry-After."),
                      400: schema.error("No fen, or one longer than the schema allows."),
                      404: schema.error("No such network."),
                      409: schema.error("The network's concept atlas is not ready (`atlas`: its state); POST "
                                        "/api/networks/<name>/concepts/ computes it."),
                      410: schema.WITHDRAWN,
                      422: schema.error("Not a legal position (the reason), or a family without readout points."),
                      429: schema.error("Too many concept scores queued; see Retry-After."),
                      503: schema.error("Computing them failed (?retry=1 asks again), or the queue is unavailable.")}


class PositionConcepts(OpenRead):
    """GET ?fen= or POST {"fen"}: one position's concept scores along the readout points."""

    parser_classes = [CheckedJSONParser]

    @extend_schema(operation_id="read_position_concepts", responses=POSITION_RESPONSES,
                   parameters=[OpenApiParameter("fen", {"type": "string", "maxLength": MAX_FEN, "pattern": r"\S"},
                                                required=True),
                               RETRY],
                   description="Each concept's probe score at every readout point for one position (the "
                               "Concepts panel's strips and square maps), from the network's stored atlas.")
    def get(self, request, name: str):
        return self.scores(request, name, request.GET.get("fen"))

    @extend_schema(operation_id="score_position_concepts", request=Fen, responses=POSITION_RESPONSES,
                   description="As GET, the FEN in a JSON body.")
    def post(self, request, name: str):
        body = request.data if isinstance(request.data, dict) else None
        if body is None:
            return _error("The body must be a JSON object with a fen.", 400)
        return self.scores(request, name, body.get("fen"))

    def scores(self, request, name: str, fen) -> JsonResponse:
        if not isinstance(fen, str) or not fen.strip() or len(fen) > MAX_FEN:
            return _error(f"fen must be a FEN of at most {MAX_FEN} characters.", 400)
        network, missing = _network(name)
        if missing:
            return missing
        why = why_not(network)
        if why:
            return _error(why, 422)
        try:
            board = board_from_input(fen.strip(), [])
        except ValueError as exc:
            return _error(f"Not a position: {exc}", 422)
        if not any(board.legal_moves):
            return _error("The position has no legal move: the network reads no such position.", 422)
        row = ready_row(network)
        if row is None:
            if withdrawal(network):
                return out_of_service(network).json()
            state = ConceptAtlas.objects.filter(network=network).values_list("status", flat=True).first()
            return JsonResponse({"error": f"The concept atlas of {network.name} is not ready: its probes give the "
                                          "scores. POST /api/networks/<name>/concepts/ computes it.",
                                 "atlas": "missing" if state is None or is_stale(row) else state}, status=409)
        key = {"position_key": network.position_key(board), "network_checksum": network.checksum,
               "stamp": row.data.get("stamp", "")}
        try:
            entry = SCORES.serve(request._request, network, 0, key, defaults={"fen": board.fen()},
                                 check_new=lambda: out_of_service(network))
            if entry.status == ConceptScores.Status.FAILED:
                raise failed(f"Computing the concept scores failed: {entry.error}")
        except Refused as refusal:
            return refusal.json()
        if entry.status == ConceptScores.Status.PENDING:
            return pending()
        return JsonResponse(entry.data)
