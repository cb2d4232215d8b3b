"""The lens's endpoints on a job's position: attention maps, what the lens can do, one lens
quantity, a neuron's where-else scan. Each is made on demand and kept (``webapp.ondemand``)."""

from __future__ import annotations

import json

import chess
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET, require_http_methods

from analysis.lens.checks import parse_fens
from webapp.jobs.attention_maps import layer_payload
from webapp.jobs.gameinput import board_for
from webapp.jobs.jobs import get_job_or_404
from webapp.jobs.keys import node_key
from webapp.jobs.live.messages import lens_for_white
from webapp.jobs.models import AttentionMap, LensResult
from webapp.lens import lens as lens_requests
from webapp.lens.neurons import MAX_POOL_BYTES, game_fens
from webapp.lens.attention_limits import refuse_for_session
from webapp.lens.costs import lens_units
from webapp.networks.lookup import out_of_service
from webapp.ondemand.limits import LIMITS
from webapp.ondemand.refused import Refused, sentence
from webapp.ondemand.serve import OnDemand, failed, pending

ATTENTION = OnDemand(AttentionMap, "sightline.compute_attention", LIMITS["attention"],
                     "computing this position's attention", lost_waits_for_retry=True)
LENS = OnDemand(LensResult, "sightline.compute_lens", LIMITS["lens"], "this lens computation",
                reset={"done": 0, "total": 0})


def refusals(view):
    """A view whose ``Refused`` becomes its JSON answer."""
    def answer(request, *args, **kwargs):
        try:
            return view(request, *args, **kwargs)
        except Refused as refused:
            return refused.json()
    answer.__name__, answer.__doc__ = view.__name__, view.__doc__
    return answer


def _job_and_board(job_id: str, node_id: int):
    job = get_job_or_404(job_id)
    if not 0 <= node_id < len(job.nodes):
        raise Refused(f"This analysis has no position {node_id}.", status=404)
    return job, board_for(job.nodes, node_id)


@require_GET
@refusals
def attention(request: HttpRequest, job_id: str, node_id: int) -> JsonResponse:
    """One layer of a node's attention maps; 202 while a worker computes them."""
    job = get_job_or_404(job_id)
    shape = job.network.caps.attention  # (layers, heads), or None
    if shape is None:
        raise Refused(f"{job.network.name} has no attention maps.", status=404)
    if not 0 <= node_id < len(job.nodes):
        raise Refused(f"This analysis has no position {node_id}.", status=404)
    try:
        layer = int(request.GET.get("layer", "0"))
    except ValueError:
        raise Refused("layer must be a number.") from None
    if layer < 0:
        raise Refused("layer must be 0 or more.")
    if layer >= shape[0]:  # refuse before queueing any work; well-formed, but not this network's
        raise Refused(f"layer must be between 0 and {shape[0] - 1}.", status=422)
    key = dict(position_key=node_key(job, node_id), network_checksum=job.network.checksum)
    entry = ATTENTION.serve(request, job, node_id, key,
                            check_new=lambda: out_of_service(job.network) or refuse_for_session(request))
    if entry.status == AttentionMap.Status.FAILED:  # the worker's failure, not the request's
        raise failed(f"Computing attention failed: {entry.error}")
    if entry.status != AttentionMap.Status.READY:
        return pending()
    if not 0 <= layer < entry.layers:
        raise Refused(f"layer must be between 0 and {entry.layers - 1}.", status=422)
    response = JsonResponse(layer_payload(bytes(entry.data), entry.layers, entry.heads, layer))
    response["Cache-Control"] = "public, max-age=86400"
    return response


@refusals
def lens_about(request: HttpRequest, job_id: str, node_id: int) -> JsonResponse:
    """What the lens can take apart on this job's network (readouts, unit kinds, what it lacks and why),
    and the position's legal moves in UCI and SAN: the page labels and accepts moves in SAN and never
    sends one that is illegal here."""
    job, board = _job_and_board(job_id, node_id)
    moves = [{"uci": move.uci(), "san": board.san(move)} for move in board.legal_moves]
    return JsonResponse({"network": job.network.name, **lens_requests.describe(job.network).to_json(), "moves": moves})


@refusals
def lens(request: HttpRequest, job_id: str, node_id: int, quantity: str) -> JsonResponse:
    """One lens quantity on a node: checked (400, nothing stored), then cached per (network,
    position, request): 202 with the poll URL while a worker computes it, 200 with it once ready."""
    job, board = _job_and_board(job_id, node_id)
    try:
        checked = lens_requests.check_request(quantity, request.GET, board, lens_requests.describe(job.network))
    except lens_requests.LensError as exc:
        raise _refusal(exc) from None
    return _lens_answer(request, job, node_id, board, checked, request.get_full_path())


def _refusal(exc: lens_requests.LensError) -> Refused:
    """400 for a request that breaks the API's contract (its schema); 422 for one that is well-formed
    but does not fit this network or position; an error's own status (413) when it has one."""
    status = 422 if isinstance(exc, lens_requests.LensMismatch) else getattr(exc, "status", 400)
    return Refused(sentence(str(exc)), status=status)


@require_http_methods(["GET", "POST"])
@refusals
def neuron_scan(request: HttpRequest, job_id: str, node_id: int) -> JsonResponse:
    """Where else a unit fires: GET over the ``atlas`` sample or this ``game``, or ``?scan=KEY`` to
    poll a scan; POST ``{"layer", "index", "unit", "top", "fens"}`` over an uploaded FEN list. The
    pool is checked with the rest (400, nothing stored); 202 carries the scan's progress."""
    job, board = _job_and_board(job_id, node_id)
    if request.method == "GET" and request.GET.get("scan"):
        entry = LensResult.objects.filter(position_key=node_key(job, node_id), network_checksum=job.network.checksum,
                                          request_key=request.GET["scan"], request__quantity="where_else").first()
        if entry is None:
            raise Refused("No such scan of this position: start it again.", status=404)
        return _lens_answer(request, job, node_id, board, entry.request, request.get_full_path())
    try:
        query, pool = _scan_query(request, job)
        checked = lens_requests.check_request("where_else", query, board, lens_requests.describe(job.network), pool)
    except lens_requests.LensError as exc:
        raise _refusal(exc) from None
    poll = f"{request.path}?scan={lens_requests.request_key(checked)}"
    return _lens_answer(request, job, node_id, board, checked, poll)


class _TooLarge(lens_requests.LensError):
    status = 413


class _NotJson(lens_requests.LensError):
    status = 415


def _scan_query(request: HttpRequest, job) -> tuple[dict, list[str] | None]:
    """The scan's fields and its pool's FENs (None for the atlas sample)."""
    if request.method == "GET":
        if request.GET.get("pool") == "fens":
            raise lens_requests.LensError("an uploaded FEN list is sent with POST (JSON: layer, index, fens)")
        return request.GET, game_fens(job.nodes) if request.GET.get("pool") == "game" else None
    if request.content_type != "application/json":
        raise _NotJson(f"an uploaded FEN list is sent as JSON (Content-Type: application/json), not "
                       f"{request.content_type or 'without a content type'}")
    if len(request.body) > MAX_POOL_BYTES:
        raise _TooLarge(f"the body is {len(request.body):,} bytes; an uploaded FEN list may be at most "
                        f"{MAX_POOL_BYTES:,}")
    try:
        body = json.loads(request.body or b"")
    except (ValueError, RecursionError):
        body = None
    if not isinstance(body, dict):
        raise lens_requests.LensError('the body must be a JSON object: {"layer": 0, "index": 3, "fens": [FEN, ...]}')
    if "fens" not in body:
        raise lens_requests.LensError("fens is required: the list of positions to scan")
    _check_json_types(body)
    query = {k: str(body[k]) for k in ("layer", "index", "unit", "top") if body.get(k) is not None}
    return {**query, "pool": "fens"}, parse_fens(body["fens"])


def _check_json_types(body: dict) -> None:
    """The numbers are JSON integers and the unit a string, as the schema says (null: not sent)."""
    for name in ("layer", "index", "top"):
        value = body.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise lens_requests.LensError(f"{name} must be a whole number (a JSON integer)")
    if body.get("unit") is not None and not isinstance(body["unit"], str):
        raise lens_requests.LensError("unit must be a string")


def _lens_answer(request: HttpRequest, job, node_id: int, board: chess.Board, checked: dict, poll: str) -> JsonResponse:
    """A checked request answered from the cache, or queued for a worker (202 with ``poll``)."""
    key = dict(position_key=node_key(job, node_id), network_checksum=job.network.checksum,
               request_key=lens_requests.request_key(checked))
    entry = LENS.serve(request, job, node_id, key, units=lens_units(checked), defaults={"request": checked},
                       check_new=lambda: out_of_service(job.network))
    if entry.status == LensResult.Status.FAILED:
        raise failed(f"Computing the lens failed: {entry.error}")
    if entry.status != LensResult.Status.READY:
        progress = {"done": entry.done, "total": entry.total} if checked["quantity"] == "where_else" else {}
        return pending(poll, **progress)
    white = board.turn == chess.WHITE
    shown = {k: v for k, v in checked.items() if k != "fens"}  # a scan's pool: its size is in the answer
    return JsonResponse({"request": shown, "network": job.network.name, **lens_for_white(entry.data, white)})
