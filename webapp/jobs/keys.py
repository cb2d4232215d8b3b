"""A job's positions and their keys, known when the job is created.

A node's key is what its network sees there (``Network.position_key``): results
and attention maps are stored under it, so transpositions and other jobs share them.
"""

from __future__ import annotations

from webapp.jobs.gameinput import board_for, node_boards
from webapp.jobs.models import AnalysisJob
from webapp.networks.models import Network


def with_keys(nodes: list[dict], network: Network) -> list[dict]:
    """``nodes`` with each node's ``key`` set for ``network``."""
    for node, board in zip(nodes, node_boards(nodes)):
        node["key"] = network.position_key(board)
    return nodes


def node_key(job: AnalysisJob, node_id: int) -> str:
    """The key of one of ``job``'s nodes: the stored one, or (a job made by hand has none) its
    board's for the job's network."""
    return job.nodes[node_id].get("key") or job.network.position_key(board_for(job.nodes, node_id))
