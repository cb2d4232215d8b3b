"""The game page's own reading endpoints (the review, the PGN export, a board picture), described
for the OpenAPI schema. Routed under ``/api/jobs/<id>/`` by ``webapp.api.urls``; each answers as the
page's address does (``webapp.jobs.views``, ``webapp.jobs.sharing``)."""

from __future__ import annotations

import chess
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema

from webapp.api import schema
from webapp.api.openread import OpenRead
from webapp.jobs import sharing, views


class FileRead(OpenRead):
    """A reading view whose answer is a file (PGN, SVG), not JSON: any Accept header gets it."""

    def perform_content_negotiation(self, request, force=False):
        return super().perform_content_negotiation(request, force=True)


class JobReview(OpenRead):
    @extend_schema(operation_id="read_review",
                   description="The game review as the page shows it: the engine's accuracy and marks per player, "
                               "the network's own marks, where the network and the engine disagree most, and "
                               "whether the network's line swings every ply. Also at `/jobs/{job_id}/review/`.",
                   responses={200: schema.Review, 404: schema.NOT_FOUND})
    def get(self, request, job_id: str):
        return views.job_review(request._request, job_id)


class PgnExport(FileRead):
    @extend_schema(operation_id="export_pgn",
                   description="The analysed game as PGN with the evaluations, searches and marks as comments (a "
                               "running job exports what is known so far), as an attachment. Also at "
                               "`/jobs/{job_id}/export.pgn`.",
                   responses={(200, "application/x-chess-pgn"): OpenApiResponse(OpenApiTypes.STR,
                                                                               description="The PGN text."),
                              404: schema.NOT_FOUND})
    def get(self, request, job_id: str):
        return sharing.pgn_export(request._request, job_id)


class BoardPicture(FileRead):
    @extend_schema(operation_id="board_svg",
                   description="A position as an SVG picture with the move played and the evaluation; with "
                               "`layer` (and `query`), the attention explorer's map drawn on it (only a map already "
                               "computed: a picture queues no work). Also at "
                               "`/jobs/{job_id}/nodes/{node_id}/board.svg`.",
                   parameters=[OpenApiParameter("flip", str, enum=["0", "1"], description="1: Black at the bottom."),
                               OpenApiParameter("layer", {"type": "integer", "minimum": 0},
                                                description="An attention layer, counted from 0."),
                               OpenApiParameter("head", {"type": "string", "pattern": "^(?:mean|[0-9]+)$"},
                                                description='With layer: "mean" (default) or a head, from 0.'),
                               OpenApiParameter("query", str, enum=list(chess.SQUARE_NAMES),
                                                description="With layer (and needed there): the query square, "
                                                            "a1 to h8."),
                               OpenApiParameter("mode", str, enum=["row", "col"],
                                                description="With layer: row, where the square looks (default); "
                                                            "col, what looks at it.")],
                   responses={(200, "image/svg+xml"): OpenApiResponse(OpenApiTypes.STR, description="The picture."),
                              400: schema.error("A parameter that breaks this schema."),
                              404: schema.error("No such job or position, or (with layer) a network without "
                                                "attention maps."),
                              422: schema.error("Well-formed, but not for this network: a layer or head it does not "
                                                "have, or layer without query."),
                              409: schema.error("The attention asked for is not computed yet: open the explorer "
                                                "on the position first.")})
    def get(self, request, job_id: str, node_id: int):
        return sharing.board_picture(request._request, job_id, node_id)
