""""Go deeper" with Stockfish on the shown position, as lichess's local engine: live depth, nodes and
1-5 principal variations, stoppable, for the owner of a job and for anyone viewing it (a shared game).

The page asks (``start``); a worker runs Stockfish (``webapp.jobs.run.engine_deeper_runner``, from the
task ``sightline.engine_deeper``), not the browser, and publishes ``engine_deep`` messages to the job's
group; Stop marks the row ``stopping`` (``stop``). Anyone may start one, so every request is bounded:
in time and nodes (``LIMITS``), one running at a time per client (``webapp.ondemand.clients``), so many
an hour per client, and by its cost on the on-demand lane, per client and on the site
(``webapp.ondemand.limits.LIMITS["engine"]``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from webapp.jobs.deeper import ACTIVE, position_id
from webapp.jobs.models import AnalysisJob, DeepSearch
from webapp.ondemand.limits import LIMITS as FAIR_USE
from webapp.ondemand.refused import Refused
from workers import dispatch

ENGINE = "stockfish"


@dataclass(frozen=True)
class EngineDeeperLimits:
    """What one client may ask of the deeper engine."""

    max_seconds: int = 60  # every search ends by then, "until stopped" included
    min_nodes: int = 100_000
    max_nodes: int = 50_000_000
    default_nodes: int = 5_000_000
    max_lines: int = 5
    default_lines: int = 3
    per_client_per_hour: int = 30


LIMITS = EngineDeeperLimits()


def _checked(job: AnalysisJob, node_id, lines, budget) -> tuple[int, int, int]:
    """(node, lines, budget nodes or 0 for until stopped), or ``Refused`` saying what is wrong."""
    node_id = position_id(job, node_id)
    if job.nodes[node_id].get("outcome"):
        raise Refused("The game is over in this position: there is nothing to search.")
    if isinstance(lines, bool) or not isinstance(lines, int) or not 1 <= lines <= LIMITS.max_lines:
        raise Refused(f"lines must be a whole number from 1 to {LIMITS.max_lines}.")
    if budget == "until-stopped":
        return node_id, lines, 0
    if isinstance(budget, bool) or not isinstance(budget, int) or not LIMITS.min_nodes <= budget <= LIMITS.max_nodes:
        raise Refused(f'budget must be "until-stopped" (at most {LIMITS.max_seconds} s) or a whole number of nodes '
                      f"from {LIMITS.min_nodes:,} to {LIMITS.max_nodes:,}.")
    return node_id, lines, budget


def cost_of(budget: int) -> float:
    """The search's estimated worker seconds: its nodes, or the longest it may run when until stopped."""
    most = float(LIMITS.max_seconds)
    return most if budget == 0 else min(most, FAIR_USE["engine"].cost(budget))


def start(job: AnalysisJob, client: str, node_id, lines, budget) -> DeepSearch:
    """Check the request and the client's and site's limits, and queue the search on the on-demand
    lane. When the broker cannot take it, the row is deleted again and ``BrokerUnavailable`` raised:
    nothing is left queued."""
    node_id, lines, budget = _checked(job, node_id, lines, budget)
    cost = cost_of(budget)
    # A row active for longer than any search may run lost its worker (killed, or never reached).
    fresh = DeepSearch.objects.filter(engine=ENGINE, created_at__gt=timezone.now() - timedelta(seconds=LIMITS.max_seconds + 60))
    with transaction.atomic():
        if fresh.filter(client=client, status__in=ACTIVE).exists():
            raise Refused("Your deeper engine is already running: stop it first.", status=409)
        hour = DeepSearch.objects.filter(engine=ENGINE, client=client, created_at__gt=timezone.now() - timedelta(hours=1))
        if hour.count() >= LIMITS.per_client_per_hour:
            raise Refused(f"The deeper engine runs at most {LIMITS.per_client_per_hour} times an hour for each visitor; "
                          "try again later.", status=429, retry_after=600)
        refusal = FAIR_USE["engine"].refusal(fresh.filter(status__in=ACTIVE), client, cost)
        if refusal is not None:
            raise refusal
        deep = DeepSearch.objects.create(job=job, node_id=node_id, budget=budget, engine=ENGINE, lines=lines,
                                         client=client, cost=cost)
    try:
        dispatch.send_task("sightline.engine_deeper", [deep.pk], queue=settings.SIGHTLINE_ONDEMAND_QUEUE)
    except dispatch.BrokerUnavailable:
        DeepSearch.objects.filter(pk=deep.pk, status=DeepSearch.Status.QUEUED).delete()
        raise
    return deep


def stop(job: AnalysisJob, deep_id: int, client: str, owner: bool) -> None:
    """Stop the client's own search (the job's owner may stop any on the job); ``Refused`` otherwise."""
    deep = DeepSearch.objects.filter(pk=deep_id, job=job, engine=ENGINE).first()
    if deep is None:
        raise Refused(f"This analysis has no deeper engine search {deep_id}.", status=404)
    if deep.client != client and not owner:
        raise Refused("Only the visitor who started this deeper engine search can stop it.", status=403)
    if not DeepSearch.objects.filter(pk=deep.pk, status__in=ACTIVE).update(status=DeepSearch.Status.STOPPING):
        raise Refused(f"The deeper engine search has already ended ({deep.status}).", status=409)


def page_settings() -> dict:
    """What the page's "go deeper" control offers."""
    return {"lines": LIMITS.default_lines, "line_choices": list(range(1, LIMITS.max_lines + 1)), "nodes": LIMITS.default_nodes,
            "max_nodes": LIMITS.max_nodes, "max_seconds": LIMITS.max_seconds}
