"""How long a search will take, from what this site has measured.

Every stored result keeps its compute time (``PositionResult.compute_ms``): a search's row the
time of that one search, an evaluation row its share of the batch. The estimate for a network,
search and budget is the median of the measured searches at that budget; failing that, the
median time per search node at the search's other budgets, times this budget's nodes; failing
that, the network's measured forward pass per position times the nodes (rough: a search
evaluates positions one batch at a time); failing that, the forward pass timed when the site
registered the network (``networks.timing``). With nothing measured for the network it says so.
Stockfish's share (``engine_estimate``) is worked out the same way from the engine lane's stored values.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass

from webapp.jobs.run.engine_lane import engine_checksum, engine_settings_key
from webapp.jobs.models import EVAL_SETTINGS_KEY, PositionResult, search_settings_key
from webapp.jobs.searches import SEARCHES
from analysis.evaluator import MaterialEvaluator
from webapp.networks.models import Network
from webapp.networks.timing import FORWARD_KEY, time_forward

# The most recent rows looked at per query: enough for a stable median, cheap to read.
SAMPLE = 200


@dataclass(frozen=True)
class CostEstimate:
    seconds_per_position: float | None  # None: nothing measured for this network yet
    basis: str  # how it was worked out, in words for the page

    def as_dict(self) -> dict:
        return asdict(self)


def _recent_ms(**filters) -> list[tuple[str, float]]:
    rows = PositionResult.objects.filter(compute_ms__gt=0, **filters)
    return list(rows.order_by("-created_at").values_list("settings_key", "compute_ms")[:SAMPLE])


def _from_history(exact: list, others: list, nodes_of, nodes: int, exact_what: str,
                  scaled_what: str) -> CostEstimate | None:
    """The median of ``exact`` (rows at this budget), else the median time per node of ``others`` (rows at
    other budgets, ``nodes_of`` turning a key's budget into nodes) times ``nodes``; None with neither."""
    if exact:
        return CostEstimate(statistics.median(ms for _, ms in exact) / 1000.0,
                            f"measured: the median of {len(exact)} {exact_what} like it on this site")
    per_node = [ms / nodes_of(int(key.split(":")[1])) for key, ms in others if key.split(":")[1].isdigit()]
    if per_node:
        return CostEstimate(statistics.median(per_node) * nodes / 1000.0,
                            f"scaled from {len(per_node)} {scaled_what} at other budgets on this site")
    return None


def estimate(network: Network, search: str, budget: int) -> CostEstimate:
    spec = SEARCHES[search]
    nodes = spec.nodes_per_position(budget)
    mine = dict(network_checksum=network.checksum)
    found = _from_history(_recent_ms(**mine, settings_key=search_settings_key(search, budget)),
                          _recent_ms(**mine, settings_key__startswith=f"{search}:"), spec.nodes_per_position,
                          nodes, "searches", f"{search} searches")
    if found is not None:
        return found
    forward = _recent_ms(**mine, settings_key=EVAL_SETTINGS_KEY)
    if forward:
        return CostEstimate(statistics.median(ms for _, ms in forward) * nodes / 1000.0,
                            "rough: the network's measured forward pass per position, times the search's nodes")
    timed = _registration_ms(network)
    if timed is not None:
        return CostEstimate(timed * nodes / 1000.0, "rough: its forward pass timed when this site registered it, "
                                                    "times the search's nodes (no analysis with it yet)")
    return CostEstimate(None, f"no measurement yet for {network.name} on this site")


def engine_estimate(nodes: int) -> CostEstimate | None:
    """Stockfish's share beside the network (the engine lane, on its own thread): the median of its
    values at this budget on this site, else its time per node at other budgets times these nodes;
    None when the engine is off (0 nodes)."""
    if nodes <= 0:
        return None
    engines = dict(network_checksum__startswith=engine_checksum(""))
    found = _from_history(_recent_ms(**engines, settings_key=engine_settings_key(nodes)),
                          _recent_ms(**engines, settings_key__startswith=engine_settings_key("")), lambda n: n,
                          nodes, "engine values", "engine values")
    return found or CostEstimate(None, "Stockfish not timed on this site yet")


def _registration_ms(network: Network) -> float | None:
    """Milliseconds per position from the registration's timing; the material count is timed here
    (it needs no model and takes microseconds)."""
    if network.kind == Network.Kind.MATERIAL:
        return time_forward(MaterialEvaluator())["ms_per_position"]
    timed = (network.metrics or {}).get(FORWARD_KEY)
    value = timed.get("ms_per_position") if isinstance(timed, dict) else None
    return float(value) if isinstance(value, (int, float)) and value > 0 else None
