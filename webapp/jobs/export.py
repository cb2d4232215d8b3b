"""The analysed game as PGN in lichess's format, written by python-chess.

Each move carries ``[%eval 0.35]`` / ``[%eval #3]`` for the position after it (White's view,
as lichess writes it), the engine's judgement as a NAG with lichess's comment ("Blunder. e5 was
best."), the network's own judgement as a comment labelled as its opinion (never a NAG, never in
lichess's words), and the PGN's own comments, NAGs and variations, so lichess, ChessBase or
python-chess read our analysis back. The eval is the engine's where the engine lane valued the
position, else the network's: centipawns from the project's win-probability formula, inverted
(``analysis.evaluator.score_to_centipawns``); mates are ``#n`` where a search proved one. The
headers carry each player's accuracy and average centipawn loss from the engine
(``webapp.jobs.review``).
"""

from __future__ import annotations

import chess
import chess.engine
import chess.pgn

from analysis.evaluator import score_to_centipawns
from webapp.jobs.models import AnalysisJob
from webapp.jobs.results import job_results
from webapp.jobs.review import engine_review

# Our judgement glyphs as the standard NAGs lichess writes for them.
JUDGEMENT_NAGS = {"?!": chess.pgn.NAG_DUBIOUS_MOVE, "?": chess.pgn.NAG_MISTAKE, "??": chess.pgn.NAG_BLUNDER}
# $1..$6 judge the move itself; one move gets one such mark, so the annotator's own wins.
MOVE_ASSESSMENT_NAGS = range(1, 7)


def position_score(results: dict, board: chess.Board) -> chess.engine.PovScore | None:
    """The node's value as a python-chess score: the engine's where it valued the node, else the
    search's where it has one, else the network's."""
    engine = results.get("engine")
    if engine is not None and (engine.get("cp") is not None or engine.get("mate")):
        value = chess.engine.Mate(engine["mate"]) if engine.get("mate") else chess.engine.Cp(engine["cp"])
        return chess.engine.PovScore(value, board.turn)
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
        f" {job.budget}" if job.budget > 1 else "") + (f"; {job.engine_name} {job.engine_nodes:,} nodes"
                                                        if job.engine_name else "")
    nodes, results = job.nodes, job_results(job)
    _add_review(game, engine_review(job, results))
    game.comment = nodes[0].get("comment", "")
    _add_eval(game, results.get(0, {}))
    pending = [(game, 0)]
    while pending:
        parent_game_node, parent_id = pending.pop()
        for child_id in nodes[parent_id]["children"]:
            child = _add_move(parent_game_node, nodes[child_id], results.get(child_id, {}), job.network.name)
            pending.append((child, child_id))
    return str(game) + "\n"


def _add_move(parent: chess.pgn.GameNode, node: dict, results: dict, network: str) -> chess.pgn.ChildNode:
    child = parent.add_variation(chess.Move.from_uci(node["uci"]), comment=node.get("comment", ""),
                                 starting_comment=node.get("starting_comment", ""), nags=node.get("nags", []))
    _add_eval(child, results)
    _add_judgement(child, results, network)
    return child


def _add_eval(game_node: chess.pgn.GameNode, results: dict) -> None:
    """``[%eval]`` for the node's position; none where the game is over (the result says it all)."""
    board = game_node.board()
    score = None if board.is_game_over() else position_score(results, board)
    if score is not None:
        game_node.set_eval(score)


def _add_judgement(child: chess.pgn.ChildNode, results: dict, network: str) -> None:
    """The engine's mark as a NAG and lichess's words; the network's as a labelled comment."""
    engine, own = results.get("engine_judgement"), results.get("judgement")
    notes = []
    if engine and engine.get("glyph"):
        if not child.nags.intersection(MOVE_ASSESSMENT_NAGS):
            child.nags.add(JUDGEMENT_NAGS[engine["glyph"]])
        reason = f"{engine['reason']}. " if engine.get("reason") else ""
        notes.append(f"{engine['name'].capitalize()}. {reason}{engine['best_san']} was best.")
    if own and own.get("glyph") and own["played"] != own["best"]:
        notes.append(f"Network's opinion ({network}): {own['best_san']} was better by "
                     f"{100 * own['drop']:.1f} points of expected score.")
    for note in notes:
        child.comment = f"{child.comment} {note}".strip() if child.comment else note


def _add_review(game: chess.pgn.Game, review: dict | None) -> None:
    """Each player's accuracy and average centipawn loss from the engine, as headers."""
    if not review:
        return
    for colour in ("white", "black"):
        figures = review[colour]
        if figures["accuracy"] is not None:
            game.headers[f"{colour.capitalize()}Accuracy"] = f"{figures['accuracy']:.1f}"
            game.headers[f"{colour.capitalize()}ACPL"] = str(figures["acpl"])
