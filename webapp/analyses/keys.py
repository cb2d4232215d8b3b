"""A job's positions and their keys, known when the job is created.

A node's key is what its network sees there (``Network.position_key``): results
and attention maps are stored under it, so transpositions and other jobs share them.
"""

from __future__ import annotations

import chess

from webapp.networks.models import Network


def node_boards(nodes: list[dict]) -> list[chess.Board]:
    """Every node's board with its move stack (an encoding may need the history)."""
    boards: list[chess.Board] = []
    for node in nodes:
        if node["parent"] is None:
            board = chess.Board(node["fen"])
        else:
            board = boards[node["parent"]].copy(stack=True)
            board.push(chess.Move.from_uci(node["uci"]))
        boards.append(board)
    return boards


def with_keys(nodes: list[dict], network: Network) -> list[dict]:
    """``nodes`` with each node's ``key`` set for ``network``."""
    for node, board in zip(nodes, node_boards(nodes)):
        node["key"] = network.position_key(board)
    return nodes
