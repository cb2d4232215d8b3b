"""Lines played on the board: new nodes in a job's tree, analysed like the rest of it.

A move dragged on the board (or a PV clicked in the position panel) becomes one or more
nodes under the position it was played from. They are added to the job's ``nodes`` in one
write, keyed for the job's network (``webapp.jobs.keys``), and the job is analysed
again: a finished job is queued once more (its stored results come from the cache, so only
the new positions cost anything), a running one picks them up before it finishes
(``webapp.jobs.run.runner`` finishes only while the job still has the nodes it analysed).
"""

from __future__ import annotations

from dataclasses import dataclass

import chess
from django.db import transaction
from django.db.models import F

from webapp.jobs.gameinput import MAX_PLIES, board_for, board_outcome
from webapp.jobs.models import AnalysisJob
from webapp.jobs.searches import MAX_JOB_NODES, SEARCHES, job_nodes
from webapp.networks.lookup import in_service
from webapp.ondemand.refused import Refused

# The longest line one request may add (a PV is at most a few dozen moves).
MAX_LINE_MOVES = 32


@dataclass
class AddedLine:
    node: int  # the last node of the line (new or already there)
    created: list[dict]  # the new nodes, in order
    requeued: bool  # the job had finished and was queued again


def parse_line(parent, moves) -> tuple[int, list[str]]:
    """The request's parent node id and UCI moves, checked for type and size only."""
    if isinstance(parent, bool) or not isinstance(parent, int):
        raise Refused("parent must be a node id (a whole number).")
    if isinstance(moves, str):
        moves = [moves]
    if not isinstance(moves, list) or not moves or not all(isinstance(m, str) for m in moves):
        raise Refused('moves must be a list of moves in UCI notation, e.g. ["e2e4"].')
    if len(moves) > MAX_LINE_MOVES:
        raise Refused(f"A line may have at most {MAX_LINE_MOVES} moves; this one has {len(moves)}.")
    return parent, moves


def _move(board: chess.Board, uci: str, where: str) -> chess.Move:
    try:
        move = chess.Move.from_uci(uci.strip())
    except ValueError:
        raise Refused(f"{uci[:12]!r} is not a move in UCI notation (e.g. e2e4, e7e8q).") from None
    if board.is_legal(move):
        return move
    if move.promotion is None and board.is_legal(chess.Move(move.from_square, move.to_square, chess.QUEEN)):
        raise Refused(f"{uci} is a promotion {where}: add the piece, e.g. {uci}q.")
    raise Refused(_why_illegal(board, move, where))


def _why_illegal(board: chess.Board, move: chess.Move, where: str) -> str:
    """An illegal move in words a player reads ("The white pawn on e2 cannot move to e5 ...")."""
    piece, start, to = board.piece_at(move.from_square), *map(chess.square_name, (move.from_square, move.to_square))
    if piece is None:
        return f"There is no piece on {start} {where}."
    colour, name = chess.COLOR_NAMES[piece.color], chess.piece_name(piece.piece_type)
    if piece.color != board.turn:
        mover = chess.COLOR_NAMES[board.turn].capitalize()
        return f"It is {mover}'s move {where}: the {name} on {start} is {colour.capitalize()}'s."
    refused = f"The {colour} {name} on {start} cannot move to {to} {where}"
    if board.is_pseudo_legal(move):  # a move of the piece's own, which the king's safety forbids
        return f"{refused}: it would leave the {colour} king in check."
    return f"{refused}."


def _numbered(after: chess.Board, san: str) -> str:
    """"2. Nf3" or "2... Nc6" for the move that led to ``after``."""
    black = after.turn == chess.WHITE  # Black made the move
    number = after.fullmove_number - (1 if black else 0)
    return f"{number}.{'..' if black else ''} {san}"


def _where(nodes: list[dict], node_id: int) -> str:
    node = nodes[node_id]
    if node["parent"] is None:
        return "in the first position"
    number, black = (node["ply"] + 1) // 2, node["ply"] % 2 == 0
    return f"after {number}.{'..' if black else ''} {node['san']}"


def plan_line(nodes: list[dict], parent: int, moves: list[str]) -> list[tuple]:
    """Check every move of the line from ``parent``: (existing child or None, move, SAN, board
    after) per move, or ``Refused`` in a player's words. Nodes are only ever appended, so a
    line checked on an older copy of the tree is as legal in the newest."""
    if not 0 <= parent < len(nodes):
        raise Refused(f"This analysis has no position {parent}.", status=404)
    board = board_for(nodes, parent)
    plan, current, where = [], parent, _where(nodes, parent)
    for uci in moves:
        move = _move(board, uci, where)
        # the child already played from here, while the line follows the tree
        existing = None if current is None else next(
            (c for c in nodes[current]["children"] if nodes[c]["uci"] == move.uci()), None)
        san = board.san(move)
        board.push(move)
        plan.append((existing, move, san, board.copy(stack=True)))
        current, where = existing, f"after {_numbered(board, san)}"
    return plan


def extend_nodes(nodes: list[dict], parent: int, moves: list[str], network) -> tuple[int, list[dict]]:
    """Follow ``moves`` from ``parent`` through existing children, appending the missing ones to
    ``nodes`` (in place, parents' ``children`` too). Every move is checked before anything changes."""
    plan = plan_line(nodes, parent, moves)
    created: list[dict] = []
    last = parent
    for existing, move, san, after in plan:
        if existing is not None:
            last = existing
            continue
        parent_id = last
        node = {"id": len(nodes), "parent": parent_id, "ply": nodes[parent_id]["ply"] + 1, "san": san,
                "uci": move.uci(), "fen": after.fen(), "children": [], "main": False,
                "outcome": board_outcome(after), "key": network.position_key(after)}
        nodes.append(node)
        nodes[parent_id]["children"].append(node["id"])
        created.append(node)
        last = node["id"]
    return last, created


def add_line(job: AnalysisJob, parent, moves) -> AddedLine:
    """Add the line to the job (or find it there) and have its new positions analysed."""
    parent, moves = parse_line(parent, moves)
    # An illegal line is refused before the write lock, which a busy worker may hold for a while
    # (a parent newer than this copy of the tree is checked under the lock only).
    if 0 <= parent < len(job.nodes):
        plan_line(job.nodes, parent, moves)
    with transaction.atomic():
        # Take the row's write lock first (SQLite locks on the first write, PostgreSQL on
        # SELECT ... FOR UPDATE): two lines added at once must not both append to the old list.
        AnalysisJob.objects.filter(pk=job.pk).update(total_positions=F("total_positions"))
        job = AnalysisJob.objects.select_for_update().select_related("network").get(pk=job.pk)
        nodes = job.nodes
        last, created = extend_nodes(nodes, parent, moves, job.network)
        if not created:
            return AddedLine(last, [], False)
        in_service(job.network)  # new positions for a withdrawn or retired network: refused (410)
        _check_size(job, len(nodes))
        fields = {"nodes": nodes, "total_positions": len(nodes)}
        requeued = job.status in AnalysisJob.FINISHED
        if requeued:  # the cache answers every known position at once: only the new ones cost
            fields.update(status=AnalysisJob.Status.QUEUED, evaluated=0, searched=0, error="", task_id="",
                          lease_owner="", lease_until=None, finished_at=None)
        AnalysisJob.objects.filter(pk=job.pk).update(**fields)
        if requeued:
            from webapp.jobs.jobs import dispatch_job

            # robust: with the broker down the job stays queued without a task, and the
            # reaper (webapp.jobs.run.reaper) sends it once the broker is back.
            transaction.on_commit(lambda: dispatch_job(job), robust=True)
    return AddedLine(last, created, requeued)


def _check_size(job: AnalysisJob, total: int) -> None:
    if total > MAX_PLIES + 1:
        raise Refused(f"An analysis holds at most {MAX_PLIES} moves; this line would make {total - 1}.")
    spec = SEARCHES.get(job.search)
    if spec is not None and job_nodes(spec, job.budget, total) > MAX_JOB_NODES:
        raise Refused(f"The analysis would need {job_nodes(spec, job.budget, total):,} search nodes, over "
                          f"the limit of {MAX_JOB_NODES:,} for one job; use a smaller budget for more lines.")
