"""The lens on a job's position (issue 28): a request checked before anything is queued, and its
answer computed by a worker, both through the library's contract (``analysis.lens.requests`` and
``analysis.lens.answers``).

The quantities are ``analysis.lens.requests.QUANTITIES``: the logit lens, a unit scaled, the causal
grid, the attention split and the neuron quantities. ``check_request`` turns the query into the
request's JSON (the cache key's input) or raises ``LensError`` with the sentence the API answers
with 400 (``LensMismatch``, a request that does not fit the network or position: 422); it checks against the network's ``LensDescription``, stored on its row when a worker
checked it (``describe``), so the web process never loads the checkpoint and a refused request
queues nothing. A worker answers the stored request with ``analysis.lens.answers`` (``webapp.lens.tasks.compute_lens``),
for the side to move; ``messages.lens_for_white`` turns the answers to White's view.
"""

from __future__ import annotations

import hashlib
import json

import chess

from analysis.lens import LensError, LensMismatch, LensUnavailable
from analysis.lens.description import LensDescription
from analysis.lens.requests import parse

__all__ = ["LensError", "LensMismatch", "LensUnavailable", "check_request", "describe", "request_key"]


def describe(network) -> LensDescription:
    """What the lens can do on ``network``, read from its row (stored when a worker checked it)."""
    if network.kind != network.Kind.CHECKPOINT:
        return LensDescription.none(f"{network.name} is a hand-written evaluation, not a network: "
                                    "it has no layers or heads to take apart")
    if not network.lens_description:
        return LensDescription.none(f"{network.name}'s lens has not been described yet: a worker describes it "
                                    "when it checks the network")
    return LensDescription.from_json(network.lens_description)


def check_request(quantity: str, query, board: chess.Board, described: LensDescription,
                  pool: list[str] | None = None) -> dict:
    """The request's JSON, or ``LensError`` (the API's 400) saying what is wrong (``pool``: a
    where-else scan's FENs)."""
    return parse(quantity, query, described, board, pool).to_json()


def request_key(request: dict) -> str:
    return hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()
