"""Move judgements: the drop from the best move's value to the played move's, in the same parent position."""

import json
from io import StringIO

import chess
import pytest
from django.core.management import call_command

from analysis.evaluator import MaterialEvaluator
from tests.web.conftest import SHORT_GAME
from tests.web.test_task import Counting, run
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.judgements import (FROM_NETWORK, FROM_SEARCH, JudgeRequest, judge_from_search,
                                        judge_with_network, judgement_settings_key, legend,
                                        short_legend)
from analysis.pov import score_for_white, white_to_move
from webapp.jobs.live.messages import judgement_for_white
from webapp.jobs.models import AnalysisJob, PositionResult
from webapp.jobs.results import job_results
from webapp.networks.model_cache import ModelCache

pytestmark = pytest.mark.django_db

# 3. d3 leaves White's queen's capture of Black's queen (3. Qxg5) on the board: a blunder at one ply.
HANGING_QUEEN = "1. e4 e5 2. Qh5 Qg5 3. d3 *"


def judgement_messages(messages) -> dict[int, dict]:
    """The judgements sent, by node: White's view (the stored ones are the mover's)."""
    return {item["node"]: item["judgement"] for kind, p in messages if kind == "judgements" for item in p["items"]}


def mover_is_white(job, node) -> bool:
    """Whether White made the move that led to ``node``."""
    return white_to_move(job.nodes[node["parent"]]["fen"])


def board_at(job, node_id) -> chess.Board:
    from webapp.jobs.gameinput import board_for

    return board_for(job.nodes, node_id)


def request(job, node_id: int, search: dict) -> JudgeRequest:
    node = job.nodes[node_id]
    return JudgeRequest(node_id, node["parent"], "k", board_at(job, node["parent"]),
                        chess.Move.from_uci(node["uci"]), search)


def test_value_search_judges_from_its_own_root_values(material_network):
    job = create_job(parse_pgn(HANGING_QUEEN), material_network, "value", 1, dispatch=False)
    finished, messages = run(job, MaterialEvaluator())
    assert finished.status == "done"
    judged = judgement_messages(messages)
    assert sorted(judged) == [1, 2, 3, 4, 5]
    results = job_results(AnalysisJob.objects.get(pk=job.pk))
    for node in finished.nodes[1:]:
        j, parent_search = judged[node["id"]], results[node["parent"]]["search"]
        white = mover_is_white(finished, node)
        assert j["source"] == FROM_SEARCH and j["played"] == node["uci"] and j["best"] == parent_search["bestmove"]
        # Sent as White's expected scores; the drop is the mover's loss, the same from either side.
        assert j["best_score"] == score_for_white(parent_search["root_values"][j["best"]][0], white)
        assert j["played_score"] == score_for_white(parent_search["root_values"][node["uci"]][0], white)
        gain = j["best_score"] - j["played_score"] if white else j["played_score"] - j["best_score"]
        assert j["drop"] == pytest.approx(max(0.0, gain), abs=1e-5)
        # stored (the mover's view): a reload shows the same marks
        assert judgement_for_white(results[node["id"]]["judgement"], white) == j
    assert judged[5]["glyph"] == "??" and judged[5]["name"] == "blunder" and judged[5]["best"] == "h5g5"
    assert judged[5]["drop"] > 0.3
    # 2... Qg5 hangs the queen, but one ply from its parent nothing shows it: every Black move
    # there keeps the material level. The old parent-vs-child comparison marked it "??".
    assert all(judged[n]["glyph"] is None for n in (1, 2, 3, 4))


def test_marks_follow_lichess_thresholds():
    board = chess.Board()
    base = {"bestmove": "e2e4", "root_values": {"e2e4": [0.60, "exact"]}}
    glyphs = {}
    for played, score in (("d2d4", 0.551), ("c2c4", 0.549), ("g1f3", 0.50), ("b1c3", 0.45), ("a2a3", 0.40)):
        search = {**base, "root_values": {**base["root_values"], played: [score, "exact"]}}
        j = judge_from_search(JudgeRequest(1, 0, "k", board, chess.Move.from_uci(played), search))
        glyphs[played] = j["glyph"]
    assert glyphs == {"d2d4": None, "c2c4": "?!", "g1f3": "?", "b1c3": "??", "a2a3": "??"}


def test_an_upper_bound_gives_a_lower_bound_on_the_drop_and_a_missing_value_none():
    board = chess.Board()
    search = {"bestmove": "e2e4", "root_values": {"e2e4": [0.7, "exact"], "a2a3": [0.5, "upper"]}}
    j = judge_from_search(JudgeRequest(1, 0, "k", board, chess.Move.from_uci("a2a3"), search))
    assert j["bound"] == "upper" and j["glyph"] == "??" and j["drop"] == pytest.approx(0.2)
    assert judge_from_search(JudgeRequest(1, 0, "k", board, chess.Move.from_uci("h2h3"), search)) is None
    best = judge_from_search(JudgeRequest(1, 0, "k", board, chess.Move.from_uci("e2e4"), search))
    assert best["drop"] == 0 and best["glyph"] is None


class Recording:
    """Records every batch handed to ``evaluate`` (as FENs)."""

    def __init__(self, inner):
        self.inner, self.batches = inner, []

    def evaluate(self, boards, **kwargs):
        self.batches.append([b.fen() for b in boards])
        return self.inner.evaluate(boards, **kwargs)


def test_policy_path_values_both_successors_in_one_batch(tiny_network):
    evaluator = ModelCache().get(tiny_network)
    board = chess.Board()
    board.push_uci("e2e4")
    best, played = chess.Move.from_uci("e7e5"), chess.Move.from_uci("a7a6")
    recording = Recording(evaluator)
    [j] = judge_with_network(recording, [JudgeRequest(2, 1, "k", board, played, {"bestmove": "e7e5"})])
    after_best, after_played = board.copy(), board.copy()
    after_best.push(best)
    after_played.push(played)
    assert recording.batches == [[after_best.fen(), after_played.fen()]]
    ev_best, ev_played = evaluator.evaluate([after_best, after_played])
    assert j["source"] == FROM_NETWORK and j["best"] == "e7e5" and j["played"] == "a7a6"
    assert j["best_score"] == pytest.approx(1 - ev_best.score, abs=1e-5)
    assert j["played_score"] == pytest.approx(1 - ev_played.score, abs=1e-5)


def test_a_successor_that_ends_the_game_takes_its_result():
    board = chess.Board("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1")  # Ra8 mates
    recording = Recording(MaterialEvaluator())
    [j] = judge_with_network(recording, [JudgeRequest(1, 0, "k", board, chess.Move.from_uci("a1a2"),
                                                      {"bestmove": "a1a8"})])
    assert j["best_score"] == 1.0 and j["glyph"] == "??"
    assert len(recording.batches) == 1 and len(recording.batches[0]) == 1  # only Ra2's successor


def test_policy_job_judges_every_move_with_the_network_after_its_parent_is_searched(tiny_network):
    job = create_job(parse_pgn(SHORT_GAME), tiny_network, "policy", 1, dispatch=False)
    counting = Counting(ModelCache().get(tiny_network))
    order = []

    def publish(kind, payload):
        if kind == "ply":
            order.append(("search", payload["node"]))
        elif kind == "judgements":
            for item in payload["items"]:
                parent = job.nodes[item["node"]]["parent"]
                assert ("search", parent) in order  # never before its parent's search
                stored = PositionResult.objects.filter(
                    settings_key=judgement_settings_key("policy:1", item["judgement"]["played"]))
                assert stored.exists()  # saved before it is announced
                order.append(("judgement", item["node"]))

    from webapp.jobs.run.runner import JobRun

    finished = JobRun(job, counting, publish).run()
    assert finished.status == "done"
    assert sorted(n for kind, n in order if kind == "judgement") == list(range(1, 9))
    results = job_results(AnalysisJob.objects.get(pk=job.pk))
    node_keys = {n["key"] for n in finished.nodes}
    for node in finished.nodes[1:]:
        j = results[node["id"]]["judgement"]
        assert j["source"] == FROM_NETWORK and j["best"] == results[node["parent"]]["search"]["bestmove"]
        # The played move's successor is this node's position: its value is 1 - this node's evaluation.
        assert j["played_score"] == pytest.approx(1 - results[node["id"]]["eval"]["score"], abs=1e-4)
    # Played successors come from phase 1's evaluations; only best moves not played are evaluated again.
    extra = counting.positions - len(node_keys)
    unplayed_best = {(n["parent"], results[n["id"]]["judgement"]["best"]) for n in finished.nodes[1:]
                     if results[n["id"]]["judgement"]["best"] not in
                     {finished.nodes[c]["uci"] for c in finished.nodes[n["parent"]]["children"]}}
    assert extra == len(unplayed_best)


def test_tree_search_uses_its_root_values_and_the_network_for_unvisited_moves(tiny_network):
    job = create_job(parse_pgn(SHORT_GAME), tiny_network, "mcts", 8, dispatch=False)
    finished, messages = run(job, ModelCache().get(tiny_network))
    judged = judgement_messages(messages)
    results = job_results(AnalysisJob.objects.get(pk=job.pk))
    assert sorted(judged) == list(range(1, 9))
    for node in finished.nodes[1:]:
        j, values = judged[node["id"]], results[node["parent"]]["search"]["root_values"]
        if j["source"] == FROM_SEARCH:
            white = mover_is_white(finished, node)
            assert j["played_score"] == score_for_white(values[node["uci"]][0], white)
            assert j["best_score"] == score_for_white(values[j["best"]][0], white)
        else:
            assert j["played"] != j["best"] and node["uci"] not in values
    assert {j["source"] for j in judged.values()} == {FROM_SEARCH, FROM_NETWORK}  # 8 nodes: both paths


def test_no_mark_before_the_comparison_is_known(material_network, client):
    job = create_job(parse_pgn(HANGING_QUEEN), material_network, "value", 1, dispatch=False)
    job.nodes[0]["key"] = "x"
    AnalysisJob.objects.filter(pk=job.pk).update(nodes=job.nodes)
    state = client.get(f"/api/jobs/{job.id}/").json()
    assert all("judgement" not in parts for parts in state["results"].values())
    run(job, MaterialEvaluator())
    state = client.get(f"/api/jobs/{job.id}/").json()
    assert state["results"]["5"]["judgement"]["glyph"] == "??"


def test_reanalysis_shows_the_same_marks_without_computing(material_network):
    job = create_job(parse_pgn(HANGING_QUEEN), material_network, "value", 1, dispatch=False)
    _, first = run(job, MaterialEvaluator())
    again = create_job(parse_pgn(HANGING_QUEEN), material_network, "value", 1, dispatch=False)
    counting = Counting(MaterialEvaluator())
    _, second = run(again, counting)
    assert counting.positions == 0 and judgement_messages(second) == judgement_messages(first)


def test_search_rows_from_before_judgements_are_searched_again(material_network):
    job = create_job(parse_pgn(HANGING_QUEEN), material_network, "value", 1, dispatch=False)
    run(job, MaterialEvaluator())
    PositionResult.objects.filter(settings_key="value:1").update(data={"bestmove": "e2e4", "score": 0.5})
    PositionResult.objects.filter(settings_key__contains="/judge/").delete()
    again = create_job(parse_pgn(HANGING_QUEEN), material_network, "value", 1, dispatch=False)
    _, messages = run(again, MaterialEvaluator())
    assert judgement_messages(messages)[5]["glyph"] == "??"
    assert all("root_values" in r.data for r in PositionResult.objects.filter(settings_key="value:1"))


def test_analyze_pgn_prints_each_moves_judgement(material_network, tmp_path):
    path = tmp_path / "game.pgn"
    path.write_text(HANGING_QUEEN)
    out = StringIO()
    call_command("analyze_pgn", str(path), "--network", "material", "--search", "value", "--json", "--no-engine",
                 stdout=out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines[0]["judgement"] is None and lines[0]["engine"] is None
    assert [line["judgement"]["glyph"] for line in lines[1:]] == [None, None, None, None, "??"]
    assert all(line["judgement"] == line["network_judgement"] and line["judgement"]["source"] != "engine"
               for line in lines[1:])


def test_the_game_page_says_where_the_marks_come_from(client, material_network, tiny_network):
    for search, fragment in (("value", "both valued by the value search"),
                             ("mcts", "both valued by mcts (root Q)")):
        job = create_job(parse_pgn(SHORT_GAME), material_network, search, 8 if search == "mcts" else 1,
                         dispatch=False)
        body = client.get(f"/jobs/{job.id}/").content.decode()
        assert 'id="judgement-legend"' in body and fragment in body and "the material count" in body
    job = create_job(parse_pgn(SHORT_GAME), tiny_network, "policy", 1, dispatch=False)
    body = client.get(f"/jobs/{job.id}/").content.decode()
    assert legend("policy").replace("'", "&#x27;") in body  # the tooltip
    assert short_legend("policy").replace("'", "&#x27;") in body  # the line under the moves
