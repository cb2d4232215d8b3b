"""The lens's API views: the lens app's own endpoints (``webapp.lens.views``), described for the
OpenAPI schema. Routed under ``/api/jobs/<id>/nodes/<n>/`` by ``webapp.api.urls``."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers

from analysis.lens import MAX_SCALE
from analysis.lens.checks import MAX_POOL, UCI_MOVE
from analysis.lens.requests import MAX_MOVES, MAX_TOP
from webapp.api import schema
from webapp.api.openread import RETRY, OpenRead
from webapp.api.parsers import CheckedJSONParser
from webapp.lens import views
from webapp.lens.neurons import MAX_POOL_BYTES

# The bounds the site holds every number to, from the constants its checks read. A bound that
# depends on the job's network (its layers, heads and units) is its 422, not the schema's.
FROM_0 = {"type": "integer", "minimum": 0}
TOP = {"type": "integer", "minimum": 1, "maximum": MAX_TOP}
SCALE = {"type": "number", "minimum": -MAX_SCALE, "maximum": MAX_SCALE}
UCI = UCI_MOVE
MOVES = {"type": "string", "pattern": f"^,*(?:{UCI},*){{0,{MAX_MOVES}}}$"}


def whole(name: str, required: bool = False, description: str = "From 0.") -> OpenApiParameter:
    return OpenApiParameter(name, FROM_0, required=required, description=description)


class Attention(OpenRead):
    """GET /api/jobs/<id>/nodes/<n>/attention/: the game page's attention endpoint
    (``analyses.views.attention``), described here."""

    @extend_schema(
        operation_id="read_attention_layer",
        description="One layer of a position's attention maps, for a network that has them; 202 while a worker "
                    "computes them (asking queues the work once).",
        parameters=[whole("layer", description="Which layer (from 0); default 0; past the network's last: 422."),
                    OpenApiParameter("retry", str, enum=["1"], description="1: queue a failed computation again.")],
        responses={200: schema.AttentionLayer,
                   202: OpenApiResponse(schema.Pending, description="A worker computes the maps; ask again after "
                                                                    "Retry-After."),
                   400: schema.error("layer is not a whole number, 0 or more."),
                   422: schema.error("layer is past the network's last layer."),
                   404: schema.error("No such job or position, or the network has no attention maps."),
                   410: schema.WITHDRAWN,
                   429: schema.error("Too many new computations asked for; see Retry-After."),
                   503: schema.error("Computing the maps failed, or the queue is unavailable; see Retry-After.")})
    def get(self, request, job_id: str, node_id: int):
        return views.attention(request._request, job_id, node_id)


LENS_RESPONSES = {
    200: schema.LensAnswer,
    202: OpenApiResponse(schema.LensPending, description="A worker computes it; ask `poll` again after Retry-After."),
    400: schema.error("The request breaks this schema (a number out of its bounds, a move that is not UCI); "
                      "nothing is stored or queued."),
    422: schema.error("Well-formed, but not for this network or position (a layer, unit or readout it does not "
                      "have, an illegal move, a capability the network lacks: the reason); nothing is stored or "
                      "queued."),
    404: schema.error("No such job or position."),
    410: schema.WITHDRAWN,
    429: schema.error("The analysis has too many lens computations queued; see Retry-After."),
    503: schema.error("Computing it failed (`retry`: ?retry=1 queues it again), or the queue is unavailable "
                      "and nothing was queued; see Retry-After.")}


class LensAbout(OpenRead):
    @extend_schema(operation_id="read_lens_capabilities", responses={200: schema.LensAbout, 404: schema.NOT_FOUND},
                   description="What the lens can take apart on the job's network: readout points, unit kinds and "
                               "what it lacks, with the reason; `moves`: the position's legal moves [{uci, san}].")
    def get(self, request, job_id: str, node_id: int):
        return views.lens_about(request._request, job_id, node_id)


class LogitLens(OpenRead):
    @extend_schema(operation_id="read_logit_lens", responses=LENS_RESPONSES,
                   description="The logit lens of a position: up to 4 moves' logit, probability and rank at every "
                               "readout point (default: the network's top 4), the top move and White's score per point.",
                   parameters=[OpenApiParameter("moves", MOVES, description=f"Up to {MAX_MOVES} UCI moves, comma-separated."),
                               OpenApiParameter("readout", str, description="Also that readout point's top moves."),
                               RETRY])
    def get(self, request, job_id: str, node_id: int):
        return views.lens(request._request, job_id, node_id, "lens")


class LensAblate(OpenRead):
    @extend_schema(operation_id="read_lens_ablation", responses=LENS_RESPONSES,
                   description="One unit's write scaled by `scale` (0 removes it, 1 is clean, 2 doubles, -1 flips): "
                               "the policy over the legal moves clean vs scaled, sorted by the change, and the score.",
                   parameters=[OpenApiParameter("unit", str, description="head (default), mlp, or the family's kind."),
                               whole("layer", required=True),
                               whole("index", required=True, description="The head or unit, from 0."),
                               OpenApiParameter("scale", SCALE, description=f"In [{-MAX_SCALE:g}, {MAX_SCALE:g}]; "
                                                                            "default 0."), RETRY])
    def get(self, request, job_id: str, node_id: int):
        return views.lens(request._request, job_id, node_id, "ablate")


class LensGrid(OpenRead):
    @extend_schema(operation_id="read_lens_grid", responses=LENS_RESPONSES,
                   description="The causal head grid of a move: its logit change (and the score change) when each "
                               "head is removed in turn; `exact` marks figures measured by an ablated pass (big nets: "
                               "attribution ranks all, the top 16 are re-measured).",
                   parameters=[OpenApiParameter("move", {"type": "string", "pattern": f"^{UCI}$"}, required=True,
                                                description="A UCI move (one that is illegal here: 422)."),
                               OpenApiParameter("unit", str, description="head (default), mlp, ..."), RETRY])
    def get(self, request, job_id: str, node_id: int):
        return views.lens(request._request, job_id, node_id, "grid")


class LensSplit(OpenRead):
    @extend_schema(operation_id="read_lens_attention_split", responses=LENS_RESPONSES,
                   description="One layer's attention taken apart, for networks whose attention logits have a position "
                               "term (Chessformer relative_bias and Shaw, Lc0 with smolgen): `content` softmax(QK^T / "
                               "sqrt(D)) alone, `position` the logits the position term adds, `final` the network's own "
                               "map; each heads x 64 x 64 by real squares (query row first, a1 = 0), base64 of "
                               "little-endian float16. A network without the split is a 400 saying why.",
                   parameters=[whole("layer", description="From 0; default 0."), RETRY])
    def get(self, request, job_id: str, node_id: int):
        return views.lens(request._request, job_id, node_id, "split")
NEURON_UNIT = OpenApiParameter("unit", str, description="The unit kind with activations: mlp (default).")
NEURON_LAYER = whole("layer", required=True)
NEURON_INDEX = whole("index", required=True, description="The unit in its layer, from 0.")
NEURON_TOP = OpenApiParameter("top", TOP, description=f"How many to list, 1 to {MAX_TOP}.")


class LensNeurons(OpenRead):
    @extend_schema(operation_id="read_lens_neurons", responses=LENS_RESPONSES,
                   description="A layer's most active units on the position: `units` [{index, peak, square, mean}], "
                               "largest peak (over the squares) first.",
                   parameters=[NEURON_LAYER, NEURON_UNIT, NEURON_TOP, RETRY])
    def get(self, request, job_id: str, node_id: int):
        return views.lens(request._request, job_id, node_id, "neurons")


class LensNeuron(OpenRead):
    @extend_schema(operation_id="read_lens_neuron", responses=LENS_RESPONSES,
                   description="One unit's activation on every square: `map` (64 numbers, a1 first), its `peak` and "
                               "`square`. Refused for units without squares (Giraffe's).",
                   parameters=[NEURON_LAYER, NEURON_INDEX, NEURON_UNIT, RETRY])
    def get(self, request, job_id: str, node_id: int):
        return views.lens(request._request, job_id, node_id, "neuron")


class LensCarriers(OpenRead):
    @extend_schema(operation_id="read_lens_carriers", responses=LENS_RESPONSES,
                   description="Every unit's attribution to a move's logit (one backward pass); the `top` largest "
                               "|estimates| re-measured by exact ablation: `carriers` [{layer, index, attribution, "
                               "exact}] (`exact`: the measured logit change).",
                   parameters=[OpenApiParameter("move", {"type": "string", "pattern": f"^{UCI}$"}, required=True,
                                                description="A UCI move (one that is illegal here: 422)."),
                               NEURON_UNIT, NEURON_TOP, RETRY])
    def get(self, request, job_id: str, node_id: int):
        return views.lens(request._request, job_id, node_id, "carriers")


SCAN_RESPONSES = {**LENS_RESPONSES,
                  202: OpenApiResponse(schema.ScanPending, description="A worker scans the pool; `done` of `total` "
                                       "positions so far. Ask `poll` again after Retry-After."),
                  400: schema.error(f"The request breaks this schema (a number out of its bounds, a pool that is "
                                    f"not atlas or game, more than {MAX_POOL} FENs in a list); nothing is stored or "
                                    "queued."),
                  422: schema.error("Well-formed, but not for this network or pool (a layer or unit it does not "
                                    "have, a FEN the position rules refuse (named as fens[i] or line n), a pool without a legal move, a capability the network "
                                    "lacks); nothing is stored or queued."),
                  404: schema.error("No such job, position or scan.")}


FENS = {"oneOf": [{"type": "array", "minItems": 1, "maxItems": MAX_POOL,
                   "items": {"type": "string", "pattern": r"\S"}},
                  {"type": "string", "pattern": r"\S"}]}


@extend_schema_field(FENS)
class FensField(serializers.JSONField):
    """A list of FENs or one text: two shapes, so a oneOf in the schema."""


class FenPool(serializers.Serializer):
    """An uploaded pool: a list of FENs (its length bounded here) or one text with a FEN a line."""

    layer = serializers.IntegerField(min_value=0)
    index = serializers.IntegerField(min_value=0)
    unit = serializers.CharField(required=False, allow_null=True, allow_blank=True, help_text="mlp (default).")
    top = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=MAX_TOP,
                                   help_text=f"1 to {MAX_TOP}; default 8.")
    fens = FensField(help_text=f"A list of FENs (at most {MAX_POOL}), or one text with a FEN a line, each checked "
                                "as the home form's FEN (half-move clock 0 to 150, move number 1 to 10,000, a legal "
                                "position).")


class LensWhereElse(OpenRead):
    """GET scans the atlas or the game; POST takes an uploaded pool, as JSON only."""

    parser_classes = [CheckedJSONParser]

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
        return views.neuron_scan(request._request, job_id, node_id)

    @extend_schema(operation_id="scan_lens_fens", responses={**SCAN_RESPONSES, 413: schema.error(
                       f"The body is over {MAX_POOL_BYTES // 1024} KiB."), 415: schema.error(
                       "A body that is not JSON.")}, request=FenPool,
                   description=f"Where else a unit fires over an uploaded FEN list (JSON only: layer, index, unit, "
                               f"top, fens: a list of FENs or one text with a FEN a line; at most {MAX_POOL}). 202 "
                               "with the `poll` URL, then 200 as for GET.")
    def post(self, request, job_id: str, node_id: int):
        return views.neuron_scan(request._request, job_id, node_id)
