"""The lc0 comparison's API view (``webapp.lc0compare.views.compare``), described for the OpenAPI
schema. Routed under ``/api/jobs/<id>/nodes/<n>/`` by ``webapp.api.urls``."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema

from webapp.api import schema
from webapp.api.openread import RETRY, OpenRead
from webapp.lc0compare import views
from webapp.lc0compare.views import NODES_DEFAULT, NODES_MAX, NODES_MIN


class Lc0Compare(OpenRead):
    @extend_schema(operation_id="compare_with_lc0",
                   description="lc0's own search of a position on the job's network beside Sightline's MCTS with the "
                               "same nodes (only for Lc0 networks lc0 can run); computed once per network, position "
                               "and nodes by a worker, then answered from the store.",
                   parameters=[OpenApiParameter("nodes", {"type": "integer", "minimum": NODES_MIN, "maximum": NODES_MAX},
                                                description=f"{NODES_MIN} to {NODES_MAX}; default: the job's own "
                                                            f"nodes when it ran an MCTS within range, else "
                                                            f"{NODES_DEFAULT}."),
                               RETRY],
                   responses={200: schema.Lc0Comparison,
                              202: OpenApiResponse(schema.LensPending, description="A worker computes it; ask `poll` "
                                                                                  "again after Retry-After."),
                              400: schema.error("nodes out of its range; nothing is stored or queued."),
                              422: schema.error("Well-formed, but not for this job: a network lc0 cannot run, a "
                                                "finished game (the reason); nothing is stored or queued."),
                              404: schema.error("No such job or position."),
                              410: schema.WITHDRAWN,
                              429: schema.error("Too many comparisons queued for this network; see Retry-After."),
                              503: schema.error("lc0 is not installed, or crashed or hung on the worker (`lc0`: "
                                                "\"unavailable\", `retry`: ?retry=1 tries again), or the queue is "
                                                "unavailable and nothing was queued.")})
    def get(self, request, job_id: str, node_id: int):
        return views.compare(request._request, job_id, node_id)
