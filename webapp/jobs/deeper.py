""""Analyse this position deeper": the job's search on one of its positions with a larger budget
(or until stopped), its lines published live as Nibbler shows them (MultiPV: visits, prior, Q
and WDL per move, with each move's line).

The page asks (``start``), a worker of the on-demand lane (``SIGHTLINE_ONDEMAND_QUEUE``, beside the
analyses' own) runs it (``webapp.jobs.run.deep_runner``, from the task
``sightline.deep_search``) and publishes ``deep`` messages to the job's group a few times a
second, then the final lines; the page's Stop button marks the row ``stopping`` (``stop``),
which the running search sees.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from webapp.jobs.models import AnalysisJob, DeepSearch
from webapp.jobs.searches import SEARCHES
from webapp.ondemand.refused import Refused
from workers import dispatch

# "Until stopped" still ends: a forgotten tab must not hold a worker for ever.
MAX_SECONDS = 600
ACTIVE = (DeepSearch.Status.QUEUED, DeepSearch.Status.RUNNING, DeepSearch.Status.STOPPING)


def default_budget(search: str, job_budget: int) -> int:
    """Ten times the job's nodes, or two plies deeper, within the search's range."""
    spec = SEARCHES[search]
    larger = job_budget + 2 if spec.budget_unit == "depth" else job_budget * 10
    return min(spec.budget_max, max(spec.budget_min, larger))


def position_id(job: AnalysisJob, node) -> int:
    """A request's ``node``: missing or not a whole number is the request's fault (400), a number that is
    none of the job's positions a 404."""
    if node is None:
        raise Refused("node is required: the id of the position to search (a whole number from 0).")
    if isinstance(node, bool) or not isinstance(node, int):
        raise Refused(f"node must be a whole number (a position's id from 0), not {str(node)[:20]!r}.")
    if not 0 <= node < len(job.nodes):
        raise Refused(f"This analysis has no position {node}.", status=404)
    return node


def start(job: AnalysisJob, node_id, budget) -> DeepSearch:
    """Check the request and queue the search: ``budget`` a number in the search's range, or
    "until-stopped" (nodes searches only; alpha-beta's depth always ends). When the broker cannot
    take it, the row is deleted again and ``BrokerUnavailable`` raised: nothing is left queued."""
    spec = SEARCHES.get(job.search)
    if spec is None or spec.fixed:
        raise Refused(f"The {job.search} search has no budget to raise; start an analysis with MCTS, "
                            f"Gumbel, probability or alpha-beta search to look deeper.")
    node_id = position_id(job, node_id)
    if job.nodes[node_id].get("outcome"):
        raise Refused("The game is over in this position: there is nothing to search.")
    if budget == "until-stopped":
        if spec.budget_unit != "nodes":
            raise Refused(f"{job.search} searches to a depth; choose one up to {spec.budget_max}.")
        budget = 0
    elif isinstance(budget, bool) or not isinstance(budget, int) or not spec.budget_min <= budget <= spec.budget_max:
        raise Refused(f'budget must be "until-stopped" or a whole number of {spec.budget_unit} from '
                            f"{spec.budget_min} to {spec.budget_max}.")
    # A row active for longer than any search may run lost its worker (killed, or never reached).
    live = DeepSearch.objects.filter(job=job, engine="", status__in=ACTIVE,
                                     created_at__gt=timezone.now() - timedelta(seconds=MAX_SECONDS + 60))
    with transaction.atomic():
        if live.exists():
            raise Refused("A deeper search of this analysis is already running: stop it first.", status=409)
        deep = DeepSearch.objects.create(job=job, node_id=node_id, budget=budget)
    try:
        dispatch.send_task("sightline.deep_search", [deep.pk], queue=settings.SIGHTLINE_ONDEMAND_QUEUE)
    except dispatch.BrokerUnavailable:
        DeepSearch.objects.filter(pk=deep.pk, status=DeepSearch.Status.QUEUED).delete()
        raise
    return deep


def stop(deep: DeepSearch) -> bool:
    """Ask the running search to stop (it keeps its lines); False when it had ended."""
    return bool(DeepSearch.objects.filter(pk=deep.pk, status__in=ACTIVE).update(status=DeepSearch.Status.STOPPING))
