"""The analysed game as PGN in lichess's format, written by python-chess.

Each move carries ``[%eval 0.35]`` / ``[%eval #3]`` for the position after it (White's view,
as lichess writes it), the move judgement as a NAG with a short comment, and the PGN's own
comments, NAGs and variations, so lichess, ChessBase or python-chess read our analysis back.
Centipawns come from the project's win-probability formula, inverted
(``analysis.evaluator.score_to_centipawns``); mates are ``#n`` where a search proved one.
"""

from __future__ import annotations

import chess
import chess.engine
import chess.pgn

from analysis.evaluator import score_to_centipawns
from webapp.analyses.models import AnalysisJob
from webapp.analyses.results import job_results

# Our judgement glyphs as the standard NAGs lichess writes for them.
JUDGEMENT_NAGS = {"?!": chess.pgn.NAG_DUBIOUS_MOVE, "?": chess.pgn.NAG_MISTAKE, "??": chess.pgn.NAG_BLUNDER}
# $1..$6 judge the move itself; one move gets one such mark, so the annotator's own wins.
MOVE_ASSESSMENT_NAGS = range(1, 7)


def position_score(results: dict, board: chess.Board) -> chess.engine.PovScore | None:
    """The node's value as a python-chess score: the search's where it has one, else the network's."""
    search, evaluation = results.get("search") or {}, results.get("eval") or {}
    mate = search.get("mate")
    if isinstance(mate, int) and mate != 0:
        return chess.engine.PovScore(chess.engine.Mate(mate), board.turn)
    score = search.get("score") if search.get("score") is not None else evaluation.get("score")
    if score is None:
        return None
    return chess.engine.PovScore(chess.engine.Cp(score_to_centipawns(float(score))), board.turn)


def export_pgn(job: AnalysisJob) -> str:
    """The whole tree as PGN text (main line first, then the variations in the PGN's order)."""
    game = chess.pgn.Game()
    board = chess.Board(job.start_fen)
    if job.start_fen != chess.STARTING_FEN:
        game.setup(board)
    for name, value in job.headers.items():
        if name not in ("FEN", "SetUp"):
            game.headers[name] = value
    game.headers["Annotator"] = f"Sightline: {job.network.name}, {job.search}" + (
        f" {job.budget}" if job.budget > 1 else "")
    nodes, results = job.nodes, job_results(job)
    game.comment = nodes[0].get("comment", "")
    _add_eval(game, results.get(0, {}))
    pending = [(game, 0)]
    while pending:
        parent_game_node, parent_id = pending.pop()
        for child_id in nodes[parent_id]["children"]:
            child = _add_move(parent_game_node, nodes[child_id], results.get(child_id, {}))
            pending.append((child, child_id))
    return str(game) + "\n"


def _add_move(parent: chess.pgn.GameNode, node: dict, results: dict) -> chess.pgn.ChildNode:
    child = parent.add_variation(chess.Move.from_uci(node["uci"]), comment=node.get("comment", ""),
                                 starting_comment=node.get("starting_comment", ""), nags=node.get("nags", []))
    _add_eval(child, results)
    _add_judgement(child, results.get("judgement"))
    return child


def _add_eval(game_node: chess.pgn.GameNode, results: dict) -> None:
    """``[%eval]`` for the node's position; none where the game is over (the result says it all)."""
    board = game_node.board()
    score = None if board.is_game_over() else position_score(results, board)
    if score is not None:
        game_node.set_eval(score)


def _add_judgement(child: chess.pgn.ChildNode, judgement: dict | None) -> None:
    if not judgement or not judgement.get("glyph"):
        return
    if not child.nags.intersection(MOVE_ASSESSMENT_NAGS):
        child.nags.add(JUDGEMENT_NAGS[judgement["glyph"]])
    note = f"{judgement['name'].capitalize()}. {judgement['best_san']} was best."
    child.comment = f"{child.comment} {note}".strip() if child.comment else note
