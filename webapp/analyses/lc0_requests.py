""""Compare with lc0" in the deeper-analysis panel: lc0's own search of the shown position on the
job's network (an Lc0 network lc0 can run), beside Sightline's MCTS with the same nodes.

``GET /jobs/<id>/nodes/<n>/lc0/?nodes=N`` is checked (400/404, nothing stored), then answered from
``Lc0Comparison`` per (network, position, nodes): 202 with the poll URL while a worker computes it
(``webapp.analyses.lc0_runner``, task ``sightline.compare_lc0``), 200 with both searches (White's
view) once ready, and 503 with ``"lc0": "unavailable"`` and the reason when lc0 is not installed, or
crashed or hung on the worker (``?retry=1`` tries a failed one again). Whether a network's family
runs in lc0 is the family's to say (``ModelFamily.lc0_search``).
"""

from __future__ import annotations

from datetime import timedelta

import chess
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from analysis.pov import score_for_white
from analysis.engines.lc0 import lc0_path
from analysis.engines.lc0_compare import INSTALL_HINT
from webapp.analyses.gameinput import board_for
from webapp.analyses.jobs import get_job_or_404
from webapp.analyses.keys import node_key
from webapp.analyses.models import Lc0Comparison
from webapp.analyses.searches import SEARCHES
from workers import dispatch
from workers.dispatch import BrokerUnavailable

NODES_MIN, NODES_MAX, NODES_DEFAULT = 10, 5000, 800
# A worker runs a comparison for seconds: a few queued per network at a time. A comparison pending
# for longer than the longest it may run (lc0_runner's limits) lost its worker.
PENDING_PER_NETWORK = 3
PENDING_WINDOW_S = 300


def runs_in_lc0(network) -> tuple[bool, str]:
    """Whether lc0's own search can run ``network``, and the family's reason when it cannot ("" if none)."""
    family = network.model_family
    if family is not None and family.lc0_search:
        return True, ""
    return False, family.no_lc0_reason if family is not None else ""


def panel_settings(job) -> dict | None:
    """What the panel's "compare with lc0" offers: None (no button) for a network lc0 has nothing to
    do with; otherwise whether it runs, why not, and the nodes to offer."""
    runs, why = runs_in_lc0(job.network)
    if not runs:
        return {"runs": False, "reason": why} if why else None
    installed = lc0_path() is not None
    return {"runs": installed, "reason": "" if installed else _sentence(INSTALL_HINT),
            "default": default_nodes(job), "min": NODES_MIN, "max": NODES_MAX}


def default_nodes(job) -> int:
    """The job's own nodes when it ran a node-budget search within range, else ``NODES_DEFAULT``."""
    spec = SEARCHES.get(job.search)
    if spec is not None and spec.budget_unit == "nodes" and not spec.fixed and NODES_MIN <= job.budget <= NODES_MAX:
        return job.budget
    return NODES_DEFAULT


class CompareRefused(ValueError):
    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def _checked(job, node_id: int, raw_nodes: str | None) -> tuple[chess.Board, int]:
    """The position and nodes asked for, or ``CompareRefused`` saying what is wrong."""
    if not 0 <= node_id < len(job.nodes):
        raise CompareRefused(f"This analysis has no position {node_id}.", status=404)
    runs, why = runs_in_lc0(job.network)
    if not runs:
        raise CompareRefused(why or f"lc0's own search cannot run {job.network.name}: only Lc0 networks "
                                    "it can read are compared with lc0.")
    nodes = str(default_nodes(job)) if raw_nodes in (None, "") else raw_nodes
    # ASCII digits only ("²" is a digit to isdigit, not to int), and short (no 10,000-digit int()).
    if not (nodes.isascii() and nodes.isdigit() and len(nodes) <= 6) or not NODES_MIN <= int(nodes) <= NODES_MAX:
        raise CompareRefused(f"nodes must be a whole number from {NODES_MIN} to {NODES_MAX}.")
    board = board_for(job.nodes, node_id)
    if board.is_game_over(claim_draw=False):
        raise CompareRefused("The game is over in this position: there is nothing to search.")
    return board, int(nodes)


@require_GET
def compare(request: HttpRequest, job_id: str, node_id: int) -> JsonResponse:
    job = get_job_or_404(job_id)
    try:
        board, nodes = _checked(job, node_id, request.GET.get("nodes"))
    except CompareRefused as exc:
        return JsonResponse({"error": str(exc)}, status=exc.status)
    key = dict(position_key=node_key(job, node_id), network_checksum=job.network.checksum, nodes=nodes)
    entry = Lc0Comparison.objects.filter(**key).first()
    retry = entry is not None and (_lost(entry) or request.GET.get("retry") == "1"
                                   and entry.status == Lc0Comparison.Status.FAILED)
    if entry is None or retry:
        if lc0_path() is None:  # nothing to queue: say so before a worker is asked
            return _unavailable(_sentence(INSTALL_HINT))
        refusal = _too_many_pending(job)
        if refusal is not None:
            response = JsonResponse({"error": refusal}, status=429)
            response["Retry-After"] = "5"
            return response
        if entry is None:
            entry, created = Lc0Comparison.objects.get_or_create(**key)
            retry = created or retry
        if retry:
            try:
                _queue(job, node_id, entry)
            except BrokerUnavailable as exc:
                response = JsonResponse({"error": exc.message("the comparison with lc0")}, status=503)
                response["Retry-After"] = str(exc.retry_after_s)
                return response
    if entry.status == Lc0Comparison.Status.FAILED:
        if entry.data.get("failed") != "lc0":  # Sightline's search failed: the worker's error, not lc0's
            return JsonResponse({"error": entry.error, "retry": "?retry=1"}, status=503)
        return _unavailable(entry.error, retry="?retry=1")
    if entry.status != Lc0Comparison.Status.READY:
        response = JsonResponse({"status": "pending", "poll": request.get_full_path()}, status=202)
        response["Retry-After"] = "1"
        return response
    return JsonResponse({"network": job.network.name, "node": node_id,
                         **comparison_for_white(entry.data, board.turn == chess.WHITE)})


def comparison_for_white(data: dict, white: bool) -> dict:
    """A stored comparison (the mover's view) with every Q as White's expected score."""
    def side(found: dict) -> dict:
        lines = [{**line, "q": None if line["q"] is None else round(score_for_white(line["q"], white), 5)}
                 for line in found["lines"]]
        return {**found, "lines": lines}

    return {**data, "lc0": side(data["lc0"]), "sightline": side(data["sightline"])}


def _queue(job, node_id: int, entry: Lc0Comparison) -> None:
    """Send the task for ``entry``; when the broker cannot take it the entry is deleted, so
    nothing stays pending without a task and the next request queues it afresh."""
    Lc0Comparison.objects.filter(pk=entry.pk).update(status=Lc0Comparison.Status.PENDING, error="", data={},
                                                     created_at=timezone.now())
    entry.status = Lc0Comparison.Status.PENDING
    try:
        dispatch.send_task("sightline.compare_lc0", [str(job.id), node_id, entry.pk], queue=job.network.queue)
    except BrokerUnavailable:
        Lc0Comparison.objects.filter(pk=entry.pk).delete()
        raise


def _lost(entry: Lc0Comparison) -> bool:
    """Pending for longer than any comparison runs: its worker was lost, so it is queued again."""
    age = timezone.now() - entry.created_at
    return entry.status == Lc0Comparison.Status.PENDING and age.total_seconds() > PENDING_WINDOW_S


def _too_many_pending(job) -> str | None:
    pending = Lc0Comparison.objects.filter(
        network_checksum=job.network.checksum, status=Lc0Comparison.Status.PENDING,
        created_at__gte=timezone.now() - timedelta(seconds=PENDING_WINDOW_S)).count()
    if pending < PENDING_PER_NETWORK:
        return None
    return (f"{pending} comparisons with lc0 on {job.network.name} are queued; at most {PENDING_PER_NETWORK} "
            "are queued at a time. Try again in a moment.")


def _unavailable(message: str, **more) -> JsonResponse:
    """503: lc0 gave (or can give) no answer here; the rest of the analysis is unaffected."""
    return JsonResponse({"error": message, "lc0": "unavailable", **more}, status=503)


def _sentence(text: str) -> str:
    return text if text.endswith(".") else text + "."  # "lc0" keeps its small letter
