"""Export as lichess-style PGN (read back with python-chess), and the board picture."""

import io
import xml.etree.ElementTree as ET

import chess
import chess.engine
import chess.pgn
import pytest

from analysis.evaluator import MaterialEvaluator, score_to_centipawns
from webapp.jobs.export import export_pgn, position_score
from webapp.jobs.gameinput import parse_fen, parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.results import job_results
from webapp.jobs.review import engine_review
from webapp.jobs.run.runner import JobRun

pytestmark = pytest.mark.django_db

# Black leaves White's queen en prise on move 2 (a blunder by any count); the PGN has its own comments and NAGs.
ANNOTATED = ('[Event "Export test"] [White "Ann"] [Black "Bob"]\n\n{A short game} 1. e4 $1 {King\'s pawn} d5 '
             '2. Qg4 Nf6?! {Missed it} (2... Bxg4 {Wins the queen} 3. a3) 3. Qf4 *\n')


def finished(tree, network, search="value", budget=1, engine_nodes=0):
    job = create_job(tree, network, search, budget, dispatch=False, engine_nodes=engine_nodes)
    done = JobRun(job, MaterialEvaluator(), lambda kind, payload: None).run()
    assert done.status == "done", done.error
    return done


def read_back(text: str) -> chess.pgn.Game:
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None and not game.errors
    return game


def expected_white_cp(results: dict, board: chess.Board) -> int:
    score = results["search"]["score"]
    cp = score_to_centipawns(score)
    return cp if board.turn == chess.WHITE else -cp


def test_export_reads_back_with_evals_judgements_variations_and_comments(material_network):
    job = finished(parse_pgn(ANNOTATED), material_network)
    results = job_results(job)
    game = read_back(export_pgn(job))
    assert game.headers["Event"] == "Export test" and game.headers["White"] == "Ann"
    assert "Sightline" in game.headers["Annotator"] and "A short game" in game.comment
    nodes_by_fen = {(n["fen"], n["san"]): n["id"] for n in job.nodes}
    checked = 0
    for node in _walk(game):
        if node.parent is None:
            continue
        node_id = nodes_by_fen[(node.board().fen(), node.san())]
        board = node.board()
        if board.is_game_over():
            assert node.eval() is None
            continue
        assert node.eval().white().score() == expected_white_cp(results[node_id], board)
        checked += 1
    assert checked == len(job.nodes) - 1
    e4 = game.next()
    assert "King's pawn" in e4.comment and chess.pgn.NAG_GOOD_MOVE in e4.nags
    queen_move = game.next().next().next()
    assert [v.san() for v in queen_move.variations] == ["Nf6", "Bxg4"]
    capture = queen_move.variations[1]
    assert capture.comment.startswith("Wins the queen") and capture.next().san() == "a3"
    missed = queen_move.next()
    assert "Missed it" in missed.comment
    judgement = results[nodes_by_fen[(missed.board().fen(), "Nf6")]]["judgement"]
    assert judgement["glyph"] == "??"  # the network's: a labelled comment, never a NAG nor lichess's words
    assert missed.nags == {chess.pgn.NAG_DUBIOUS_MOVE} and "Blunder" not in missed.comment
    assert f"Network's opinion (material): Bxg4 was better by {100 * judgement['drop']:.1f} points" in missed.comment


def test_the_engines_marks_become_nags_and_the_networks_stay_opinions(material_network):
    job = finished(parse_pgn("1. e4 d5 2. Qg4 Nf6 3. Qf4 *"), material_network, engine_nodes=20_000)
    results = job_results(job)
    game = read_back(export_pgn(job))
    missed = game.next().next().next().next()
    assert results[4]["engine_judgement"]["glyph"] == "??" and results[4]["judgement"]["glyph"] == "??"
    assert missed.nags == {chess.pgn.NAG_BLUNDER} and "Blunder. Bxg4 was best." in missed.comment
    assert "Network's opinion (material)" in missed.comment
    assert not game.next().nags and "Stockfish" in game.headers["Annotator"]
    for colour in ("White", "Black"):  # the engine's review, as headers
        assert 0 <= float(game.headers[f"{colour}Accuracy"]) <= 100 and int(game.headers[f"{colour}ACPL"]) >= 0
    review = engine_review(job, results)  # 2. Qg4?? hangs the queen and 2...Nf6?? does not take it
    assert review["white"]["blunders"] == review["black"]["blunders"] == 1 and review["complete"]
    assert game.headers["WhiteAccuracy"] == f"{review['white']['accuracy']:.1f}"
    engine = results[4]["engine"]  # the position after 2...Nf6: the engine's eval, not the network's
    assert game.next().next().next().next().eval().pov(chess.WHITE) == \
        chess.engine.PovScore(chess.engine.Cp(engine["cp"]), chess.WHITE).white()


def test_mates_are_written_as_mate_distances(material_network):
    job = finished(parse_fen("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"), material_network)
    text = export_pgn(job)
    assert "[%eval #1]" in text
    game = read_back(text)
    assert game.eval().white() == chess.engine.Mate(1)
    assert game.headers["FEN"] == "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"
    board = chess.Board("6k1/5ppp/8/8/8/8/8/r5K1 b - - 0 1")
    assert position_score({"search": {"mate": 2, "score": 1.0}}, board).white() == chess.engine.Mate(-2)


def test_export_view_downloads_pgn(client, material_network):
    job = finished(parse_pgn("1. e4 e5 *"), material_network)
    response = client.get(f"/jobs/{job.id}/export.pgn")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/x-chess-pgn")
    assert "attachment" in response["Content-Disposition"]
    assert read_back(response.content.decode()).next().eval() is not None
    assert client.get("/jobs/nope/export.pgn").status_code == 404


def test_board_svg_has_the_arrows(client, material_network):
    job = finished(parse_pgn("1. e4 e5 *"), material_network)
    response = client.get(f"/jobs/{job.id}/nodes/1/board.svg?flip=1")
    assert response.status_code == 200 and response["Content-Type"].startswith("image/svg+xml")
    root = ET.fromstring(response.content)
    assert root.tag.endswith("svg")
    assert b'class="arrow' in response.content and b"lastmove" in response.content
    assert client.get(f"/jobs/{job.id}/nodes/9/board.svg").status_code == 404
    bad = client.get(f"/jobs/{job.id}/nodes/1/board.svg?flip=yes")
    assert bad.status_code == 400 and "flip" in bad.json()["error"]


def test_board_svg_draws_the_engines_best_move_in_the_pages_colour():
    from webapp.jobs.boardsvg import BEST_COLOUR, ENGINE_COLOUR, arrows

    results = {"eval": {"policy": [["e7e5", 0.5], ["c7c5", 0.03]]}, "search": {"bestmove": "e7e5"},
               "engine": {"best": "c7c5", "cp": 20}}
    drawn = [(chess.square_name(a.tail), chess.square_name(a.head), a.color) for a in arrows(results)]
    assert drawn[1:] == [("e7", "e5", BEST_COLOUR), ("c7", "c5", ENGINE_COLOUR)]
    assert len(drawn) == 3  # c7c5 is under the policy arrows' 4% floor, so only the engine draws it
    assert [a.color for a in arrows({"engine": {"best": None, "mate": 0}})] == []  # the game is over


def _walk(game):
    stack = [game]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.variations)


def test_board_svg_with_the_explorers_attention_map(client, tiny_network, material_network):
    import numpy as np

    from webapp.jobs.attention_maps import encode_maps
    from webapp.jobs.boardsvg import colour
    from webapp.jobs.models import AttentionMap

    job = create_job(parse_pgn("1. e4 e5 *"), tiny_network, "policy", 1, dispatch=False)
    url = f"/jobs/{job.id}/nodes/1/board.svg"
    waiting = client.get(url, {"layer": 0, "head": 1, "query": "e4"})
    assert waiting.status_code == 409 and "open the attention explorer" in waiting.json()["error"]
    maps = np.full((2, 4, 64, 64), 1 / 64, dtype=np.float32)
    maps[0, 1, chess.E4, :] = 0.0
    maps[0, 1, chess.E4, chess.D5] = 1.0  # layer 1, head 2: e4 looks at d5 only
    AttentionMap.objects.create(position_key=job.nodes[1]["key"], network_checksum=tiny_network.checksum,
                                status=AttentionMap.Status.READY, layers=2, heads=4, data=encode_maps(maps))
    response = client.get(url, {"layer": 0, "head": 1, "query": "e4"})
    assert response.status_code == 200
    svg = response.content.decode()
    hottest, coldest = colour(1.0), colour(0.0)
    assert svg.count(f'fill="{hottest[:7]}"') == 1 and svg.count(f'fill="{coldest[:7]}"') == 63, svg[:400]
    assert 'class="arrow' not in svg  # the attention map replaces the policy arrows
    column = client.get(url, {"layer": 0, "head": "mean", "query": "d5", "mode": "col"})
    assert column.status_code == 200 and column.content != response.content
    # 400: what the schema refuses (with or without layer); 422: well-formed, but not this network's.
    for params, status, words in [({"layer": 2, "query": "e4"}, 422, "layer must be a number from 0 to 1"),
                                  ({"layer": 0, "head": 4, "query": "e4"}, 422, "head must be"),
                                  ({"layer": 0}, 422, "give query"),
                                  ({"layer": "-1", "query": "e4"}, 400, "layer must be a whole number"),
                                  ({"layer": 0, "query": "e9"}, 400, "query must be a square"),
                                  ({"query": "e9"}, 400, "query must be a square"),
                                  ({"layer": 0, "query": "e4", "mode": "diagonal"}, 400, "mode must be row or col")]:
        bad = client.get(url, params)
        assert bad.status_code == status and words in bad.json()["error"], (params, bad.content)
    plain = finished(parse_pgn("1. e4 e5 *"), material_network)
    refused = client.get(f"/jobs/{plain.id}/nodes/1/board.svg", {"layer": 0, "query": "e4"})
    assert refused.status_code == 404 and "has no attention maps" in refused.json()["error"]
