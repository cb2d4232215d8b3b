"""How stored results become what pages and messages carry.

Everything here is from the side to move's point of view, as the evaluator
API gives it, and is stored that way; ``webapp.jobs.live.messages`` turns it into
White's view for the page.
"""

from __future__ import annotations

from typing import Hashable

import chess

from analysis.displayed_value import ShownValue
from analysis.evaluator import Evaluation, key_digest
from webapp.jobs.run.engine_lane import engine_key
from webapp.jobs.run.engine_pass import confirm_nodes, engine_judgements, stored_engine_values
from webapp.jobs.judgements import judgement_settings_key, root_values_json
from webapp.jobs.models import AnalysisJob, PositionResult

POLICY_DIGITS = 4
ROOT_MOVES_KEPT = 12
# SAN is spelled out for the likeliest moves only (the page shows 8 and the played move,
# which it names from the move list): SAN for every legal move would cost more than the rest of the row.
POLICY_SAN = 16


def digest_key(key: Hashable) -> str:
    """A fixed-size database key for ``evaluator.cache_key(board)`` (``Network.position_key`` gives the same)."""
    return key_digest(key)


def evaluation_json(ev: Evaluation, board: chess.Board,
                    action_values: dict[chess.Move, float] | None = None, shown: ShownValue | None = None) -> dict:
    """Policy entries are [uci, probability, san], most likely first (san is null past ``POLICY_SAN``).

    ``action_values`` (a network with an action-value head: ``evaluate_actions``) are every
    legal move's predicted win probability for the side to move, stored as {uci: p}.

    ``shown``: the value the family shows (``analysis.displayed_value``). Where it is not the static
    value, ``score``/``wdl`` are the shown one, ``static_score`` the network's own output and
    ``value_source`` names the policy ("quiescence"), with ``value_nodes`` the nodes it took.
    """
    policy = sorted(ev.policy.items(), key=lambda kv: kv[1], reverse=True)
    extras = {k: round(float(v), 5) for k, v in ev.extras.items() if isinstance(v, (int, float))}
    data = {
        "score": round(float(ev.score), 5),
        "wdl": [round(float(x), 5) for x in ev.wdl] if ev.wdl is not None else None,
        "policy": [[m.uci(), round(float(p), POLICY_DIGITS), board.san(m) if i < POLICY_SAN else None]
                   for i, (m, p) in enumerate(policy)],
        "extras": extras,
    }
    if shown is not None and shown.static_score is not None:
        data.update(score=round(float(shown.score), 5), value_source=shown.source, value_nodes=shown.nodes,
                    wdl=[round(float(x), 5) for x in shown.wdl] if shown.wdl is not None else None,
                    static_score=round(float(shown.static_score), 5))
    if action_values is not None:
        data["action_values"] = {m.uci(): round(float(p), 5) for m, p in action_values.items()}
    return data


def san_line(board: chess.Board, moves) -> list[str]:
    """SAN for a line of moves from ``board``; stops at the first move that is not legal."""
    scratch, out = board.copy(stack=False), []
    for move in moves:
        if not scratch.is_legal(move):
            break
        out.append(scratch.san(move))
        scratch.push(move)
    return out


def search_json(result, board: chess.Board, known_san: dict[str, str] | None = None) -> dict:
    """An ``analysis.search`` SearchResult as stored and sent (root moves trimmed), with SAN added.

    ``root_values`` keeps every root move's value, untrimmed: move judgements need the played move's.

    ``known_san`` ({uci: san} for ``board``, e.g. from its stored evaluation) saves writing
    SAN again for the root moves that the policy already named.
    """
    known_san = known_san or {}
    data = result.to_json()
    data["root"] = [r.to_json() | {"depth": r.depth, "san": known_san.get(r.move.uci()) or board.san(r.move)}
                    for r in result.top_root(ROOT_MOVES_KEPT)]
    data.update({"algo": result.algo, "depth": result.depth, "seldepth": result.seldepth, "mate": result.mate,
                 "elapsed_s": round(result.elapsed_s, 4), "stopped": result.stopped,
                 "best_san": board.san(result.best_move) if result.best_move else None,
                 "pv_san": san_line(board, result.pv), "root_values": root_values_json(result)})
    return data


def job_results(job: AnalysisJob) -> dict[int, dict]:
    """{node id: {"eval", "search", "judgement", "engine", "engine_judgement"}} for every node that has
    results stored (side to move's view; ``judgement`` is the network's).

    A node's judgement (of the move that led to it) is stored under its parent's position key; the
    engine's is made from the engine's values of the two positions (``webapp.jobs.run.engine_pass``).
    """
    keys: dict[str, list[int]] = {}
    for node in job.nodes:
        if node.get("key"):
            keys.setdefault(node["key"], []).append(node["id"])
    if not keys:
        out: dict[int, dict] = {}
        _add_engine(job, out)
        return out
    wanted = {job.eval_settings_key: "eval", job.search_settings_key: "search"}
    judged = _judged_moves(job)
    out: dict[int, dict] = {}
    rows = PositionResult.objects.filter(
        network_checksum=job.network.checksum, settings_key__in=list(wanted) + sorted({s for _, s in judged}),
        position_key__in=list(keys),
    ).values_list("position_key", "settings_key", "data")
    for key, settings_key, data in rows:
        if settings_key in wanted:
            for node_id in keys[key]:
                out.setdefault(node_id, {})[wanted[settings_key]] = data
        for node_id in judged.get((key, settings_key), ()):
            out.setdefault(node_id, {})["judgement"] = data
    _add_engine(job, out)
    return out


def _add_engine(job: AnalysisJob, out: dict[int, dict]) -> None:
    """The engine lane's values ("engine") and the engine's judgements ("engine_judgement") where known."""
    stored = stored_engine_values(job)
    if not stored:
        return
    values = {node["id"]: stored[k] for node in job.nodes if (k := engine_key(node["fen"])) in stored}
    for node_id, value in values.items():
        out.setdefault(node_id, {})["engine"] = value
    nodes = confirm_nodes(job)
    deep_stored = stored_engine_values(job, nodes=nodes)
    deep = {node["id"]: deep_stored[k] for node in job.nodes if (k := engine_key(node["fen"])) in deep_stored}
    for node_id, judgement in engine_judgements(job.nodes, values, deep, nodes).items():
        out[node_id]["engine_judgement"] = judgement


def _judged_moves(job: AnalysisJob) -> dict[tuple[str, str], list[int]]:
    """{(parent position key, judgement settings key): [node ids]} for every move in the job."""
    out: dict[tuple[str, str], list[int]] = {}
    for node in job.nodes:
        parent = node["parent"]
        if parent is not None and job.nodes[parent].get("key"):
            wanted = (job.nodes[parent]["key"], judgement_settings_key(job.search_settings_key, node["uci"]))
            out.setdefault(wanted, []).append(node["id"])
    return out
