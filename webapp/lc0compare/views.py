""""Compare with lc0" in the deeper-analysis panel: lc0's own search of the shown position on the
job's network (an Lc0 network lc0 can run), beside Sightline's MCTS with the same nodes.

``GET /jobs/<id>/nodes/<n>/lc0/?nodes=N`` is checked (400/404, nothing stored), then answered from
``Lc0Comparison`` per (network, position, nodes): 202 with the poll URL while a worker computes it
(``webapp.lc0compare.runner``, task ``sightline.compare_lc0``), 200 with both searches (White's
view) once ready, and 503 with ``"lc0": "unavailable"`` and the reason when lc0 is not installed, or
crashed or hung on the worker (``?retry=1`` tries a failed one again). Whether a network's family
runs in lc0 is the family's to say (``FamilyAbout.lc0_search``).
"""

from __future__ import annotations

import chess
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from analysis.pov import score_for_white
from analysis.engines.lc0_compare import INSTALL_HINT
from analysis.engines.lc0 import lc0_path
from webapp.jobs.gameinput import board_for
from webapp.jobs.jobs import get_job_or_404
from webapp.jobs.keys import node_key
from webapp.jobs.models import Lc0Comparison
from webapp.jobs.searches import SEARCHES
from webapp.networks.lookup import out_of_service
from webapp.ondemand.limits import LIMITS
from webapp.ondemand.refused import Refused
from webapp.ondemand.serve import OnDemand, failed, pending

NODES_MIN, NODES_MAX, NODES_DEFAULT = 10, 5000, 800
# A worker runs a comparison for seconds: it costs lc0's nodes and the MCTS's (LIMITS["lc0"]).
COMPARISONS = OnDemand(Lc0Comparison, "sightline.compare_lc0", LIMITS["lc0"], "the comparison with lc0",
                       reset={"data": {}})


def runs_in_lc0(network) -> tuple[bool, str]:
    """Whether lc0's own search can run ``network``, and the family's reason when it cannot ("" if none)."""
    about = network.about
    if about is not None and about.lc0_search:
        return True, ""
    return False, about.no_lc0_reason if about is not None else ""


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


def _checked(job, node_id: int, raw_nodes: str | None) -> tuple[chess.Board, int]:
    """The position and nodes asked for, or ``Refused`` saying what is wrong."""
    if not 0 <= node_id < len(job.nodes):
        raise Refused(f"This analysis has no position {node_id}.", status=404)
    # The contract first (400: nodes out of its published range), then what this job allows (422).
    nodes = str(default_nodes(job)) if raw_nodes in (None, "") else raw_nodes
    # ASCII digits only ("²" is a digit to isdigit, not to int), and short (no 10,000-digit int()).
    if not (nodes.isascii() and nodes.isdigit() and len(nodes) <= 6) or not NODES_MIN <= int(nodes) <= NODES_MAX:
        raise Refused(f"nodes must be a whole number from {NODES_MIN} to {NODES_MAX}.")
    runs, why = runs_in_lc0(job.network)
    if not runs:
        raise Refused(why or f"lc0's own search cannot run {job.network.name}: only Lc0 networks "
                             "it can read are compared with lc0.", status=422)
    board = board_for(job.nodes, node_id)
    if board.is_game_over(claim_draw=False):
        raise Refused("The game is over in this position: there is nothing to search.", status=422)
    return board, int(nodes)


@require_GET
def compare(request: HttpRequest, job_id: str, node_id: int) -> JsonResponse:
    job = get_job_or_404(job_id)
    try:
        board, nodes = _checked(job, node_id, request.GET.get("nodes"))
        key = dict(position_key=node_key(job, node_id), network_checksum=job.network.checksum, nodes=nodes)
        entry = COMPARISONS.serve(request, job, node_id, key, units=2 * nodes,
                                  check_new=lambda: out_of_service(job.network) or _lc0_missing())
        if entry.status == Lc0Comparison.Status.FAILED:
            if entry.data.get("failed") != "lc0":  # Sightline's search failed: the worker's error, not lc0's
                raise failed(entry.error)
            raise _unavailable(entry.error, retry="?retry=1")
    except Refused as refused:
        return refused.json()
    if entry.status != Lc0Comparison.Status.READY:
        return pending(request.get_full_path())
    return JsonResponse({"network": job.network.name, "node": node_id,
                         **comparison_for_white(entry.data, board.turn == chess.WHITE)})


def _lc0_missing() -> Refused | None:
    """Nothing to queue when lc0 is not installed: say so before a worker is asked."""
    return None if lc0_path() is not None else _unavailable(_sentence(INSTALL_HINT))


def comparison_for_white(data: dict, white: bool) -> dict:
    """A stored comparison (the mover's view) with every Q as White's expected score."""
    def side(found: dict) -> dict:
        lines = [{**line, "q": None if line["q"] is None else round(score_for_white(line["q"], white), 5)}
                 for line in found["lines"]]
        return {**found, "lines": lines}

    return {**data, "lc0": side(data["lc0"]), "sightline": side(data["sightline"])}


def _unavailable(message: str, **more) -> Refused:
    """503: lc0 gave (or can give) no answer here; the rest of the analysis is unaffected."""
    return Refused(message, status=503, lc0="unavailable", **more)


def _sentence(text: str) -> str:
    return text if text.endswith(".") else text + "."  # "lc0" keeps its small letter
