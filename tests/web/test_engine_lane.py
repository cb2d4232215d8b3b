"""The engine lane (issue 29): Stockfish beside the network, its marks, its budget's error paths, and a
missing, crashing or hanging engine (tests/fake_engine.py) that leaves the network's analysis whole."""

from __future__ import annotations

import json
import math
import time
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from analysis.evaluator import MaterialEvaluator
from analysis.game_review import Eval, mark
from tests.conftest import require_stockfish
from tests.fake_engine import process_gone, write_fake_engine
from tests.web.conftest import SHORT_GAME
from tests.web.test_api import submit, token  # noqa: F401 (a fixture)
from webapp.jobs.run.engine_lane import engine_checksum, engine_key
from webapp.jobs.run.engine_pass import confirm_nodes, stored_engine_values
from webapp.jobs.run.mark_confirmation import confirmed
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.live.messages import job_snapshot
from webapp.jobs.models import AnalysisJob, PositionResult
from webapp.jobs.results import job_results
from webapp.jobs.run.runner import JobRun

pytestmark = pytest.mark.django_db
NODES = 20_000


def run(job):
    messages = []
    finished = JobRun(job, MaterialEvaluator(), lambda kind, payload: messages.append((kind, payload))).run()
    return finished, messages


def analysed(network, pgn=SHORT_GAME, nodes=NODES):
    job = create_job(parse_pgn(pgn), network, "value", 1, dispatch=False, engine_nodes=nodes)
    return run(job)


def wait_until(check, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def network_complete(job) -> bool:
    results = job_results(job)
    return all("eval" in results[n["id"]] and "search" in results[n["id"]] for n in job.nodes) and \
        all("judgement" in results[n["id"]] for n in job.nodes if n["parent"] is not None)


def test_the_engine_values_every_position_and_judges_every_move(material_network):
    require_stockfish()
    job, messages = analysed(material_network)
    assert job.status == "done" and job.engine_note == "" and job.engine_name.startswith("Stockfish")
    results, snapshot = job_results(job), job_snapshot(job)["results"]
    assert all("engine" in results[n["id"]] for n in job.nodes)  # the variation's positions too
    deep = stored_engine_values(job, nodes=confirm_nodes(job))  # a "?" or "??" is confirmed deeper
    for node in job.nodes[1:]:
        before, after = results[node["parent"]]["engine"], results[node["id"]]["engine"]
        expected = mark(Eval(before["cp"], before["mate"]), Eval(after["cp"], after["mate"]),
                        played_is_best=node["uci"] == before["best"])
        shown = snapshot[str(node["id"])]["judgement"]
        if expected and expected.glyph in ("?", "??"):
            deep_before, deep_after = (deep[engine_key(job.nodes[i]["fen"])] for i in (node["parent"], node["id"]))
            deeper = mark(Eval(deep_before["cp"], deep_before["mate"]), Eval(deep_after["cp"], deep_after["mate"]),
                          played_is_best=node["uci"] == deep_before["best"])
            assert shown["glyph"] == confirmed({"glyph": expected.glyph}, {"glyph": deeper and deeper.glyph}, 1)["glyph"]
        else:
            assert shown["glyph"] == (expected.glyph if expected else None)
        assert shown["source"] == "engine"
        assert snapshot[str(node["id"])]["network_judgement"]["source"] in ("search", "network")
    sent = {item["node"] for kind, payload in messages if kind == "engine" for item in payload["items"]}
    assert sent == {n["id"] for n in job.nodes}
    white_view = snapshot["1"]["engine"]  # after 1. e4, Black to move: White's view is the stored one turned
    assert white_view["cp"] == -results[1]["engine"]["cp"] and white_view["score"] == 1 - results[1]["engine"]["score"]
    assert PositionResult.objects.filter(network_checksum=engine_checksum(job.engine_name)).count() == len(
        {n["fen"] for n in job.nodes}) + len(deep)


def test_the_page_learns_the_engines_name_before_its_first_value(material_network):
    """The live page names the engine from the job's status: without a status once the engine
    started, its line, figure and disagreements said "the engine" until the job ended."""
    require_stockfish()
    job, messages = analysed(material_network)
    first_value = next(i for i, (kind, _) in enumerate(messages) if kind == "engine")
    named = [payload["engine_name"] for kind, payload in messages[:first_value] if kind == "status"]
    assert named and named[-1] == job.engine_name


def test_an_engine_judgements_figures_are_the_values_the_panel_shows():
    """Byrne-Fischer's last move: Rc2# where the engine's line had Ba3#, both mate in one. The
    judgement's figures are the values' own scores (100% a mate), as the panel and graph show them,
    not lichess's ceiled 97.5%; the mark is still lichess's (none: the mate was kept)."""
    from webapp.jobs.run.engine_pass import engine_judgement

    before = {"cp": None, "mate": 1, "score": 1.0, "best": "b4a3", "best_san": "Ba3#"}
    mated = {"cp": None, "mate": 0, "score": 0.0}
    j = engine_judgement("a2c2", before, mated)
    assert (j["best_score"], j["played_score"], j["drop"], j["glyph"]) == (1.0, 1.0, 0.0, None)
    winning = {"cp": 1500, "mate": None, "score": 0.99221, "best": "d1d8"}
    j = engine_judgement("d1d2", winning, {"cp": -1400, "mate": None, "score": 0.00577})
    assert j["best_score"] == 0.99221 and j["played_score"] == pytest.approx(0.99423) and j["glyph"] is None


def test_engine_values_are_cached_like_the_rest(material_network, monkeypatch):
    require_stockfish()
    first, _ = analysed(material_network)
    from analysis.engines import reference as reference_engine

    monkeypatch.setattr(reference_engine.ReferenceEngine, "analyse", lambda *a, **k: pytest.fail("not cached"))
    again, messages = analysed(material_network)
    assert again.status == "done" and job_results(again)[3]["engine"] == job_results(first)[3]["engine"]
    assert any(kind == "engine" for kind, _ in messages)


def test_moves_added_later_are_valued_by_the_engine(material_network):
    require_stockfish()
    from webapp.jobs.variations import add_line

    job, _ = analysed(material_network, "1. e4 e5 *")
    add_line(job, 2, ["g1f3"])
    job.refresh_from_db()
    job, _ = run(job)
    added = next(n for n in job.nodes if n["uci"] == "g1f3")
    assert job_results(job)[added["id"]]["engine_judgement"]["source"] == "engine"


@pytest.mark.parametrize("mode, words", [("crash", "stopped unexpectedly"), ("hang", "did not answer within")])
def test_a_crashing_or_hanging_engine_stops_only_the_engine_line(material_network, settings, tmp_path, mode, words):
    path, pidfile = write_fake_engine(tmp_path, mode)
    settings.SIGHTLINE_ENGINE_PATH, settings.SIGHTLINE_ENGINE_SLACK_S = str(path), 1.0
    job, messages = analysed(material_network, nodes=1_000)
    assert job.status == "done" and words in job.engine_note and "network's analysis goes on" in job.engine_note
    assert network_complete(job)
    valued = [n["id"] for n in job.nodes if "engine" in job_results(job).get(n["id"], {})]
    assert valued == ([0, 1] if mode == "crash" else [])  # nothing the engine finished is lost
    assert wait_until(lambda: process_gone(pidfile))
    statuses = [payload for kind, payload in messages if kind == "status"]
    assert words in statuses[-1]["engine_note"]


def test_no_stockfish_means_no_engine_line_and_a_sentence_saying_so(material_network, settings, tmp_path, monkeypatch):
    settings.SIGHTLINE_ENGINE_PATH = str(tmp_path / "no-such-stockfish")
    job, _ = analysed(material_network)
    assert job.status == "done" and "could not be started" in job.engine_note and network_complete(job)
    settings.SIGHTLINE_ENGINE_PATH = ""
    monkeypatch.setattr("analysis.engines.stockfish.shutil.which", lambda *a, **k: None)
    job, _ = analysed(material_network)
    assert "Stockfish is not installed here" in job.engine_note and network_complete(job)
    assert job_snapshot(job)["job"]["engine_note"] == job.engine_note
    assert all(v["judgement"]["source"] != "engine" for k, v in job_snapshot(job)["results"].items() if k != "0")


def test_the_command_follows_the_contract(material_network, tiny_network, tmp_path):  # no shipped nets needed
    require_stockfish()
    path = tmp_path / "game.pgn"
    path.write_text(SHORT_GAME)
    out = StringIO()
    call_command("analyze_pgn", str(path), "--network", "material", "--search", "value", "--json",
                 "--engine-nodes", str(NODES), stdout=out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(lines) == 9
    for line in lines:
        engine = line["engine"]
        assert {"cp", "mate", "best", "score"} <= set(engine) and (engine["cp"] is None) != (engine["mate"] is None)
        assert isinstance(engine["cp"] if engine["mate"] is None else engine["mate"], int)
        assert 0 <= engine["score"] <= 1 and len(engine["best"]) in (4, 5)
        if engine["cp"] is not None:  # the side to move's expected score on lichess's curve
            assert engine["score"] == pytest.approx(1 / (1 + math.exp(-0.00368208 * engine["cp"])), abs=1e-4)
        if line["parent"] is not None:
            assert line["judgement"]["source"] == "engine" and line["network_judgement"]["source"] != "engine"
    plain = StringIO()
    call_command("analyze_pgn", str(path), "--network", "material", "--search", "value", "--json", "--no-engine",
                 stdout=plain)
    assert all(json.loads(line)["engine"] is None for line in plain.getvalue().splitlines())
    with pytest.raises(CommandError, match="from 1,000 to 2,000,000"):
        call_command("analyze_pgn", str(path), "--json", "--engine-nodes", "5", stdout=StringIO())


@pytest.mark.parametrize("value, status, fragment", [(5, 400, "must be 0 or from 1,000 to 2,000,000"),
                                                     (10**9, 400, "must be 0 or from 1,000 to 2,000,000"),
                                                     ("many", 400, "whole number"), (0, 201, None),
                                                     (None, 201, None), (50_000, 201, None)])
def test_the_api_takes_the_engine_budget(client, material_network, token, monkeypatch, settings,  # noqa: F811
                                         value, status, fragment):
    monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: None)
    data = {"pgn": "1. e4 *", "network": "material", "search": "value"}
    if value is not None:
        data["engine_nodes"] = value
    response = submit(client, data, token)
    assert response.status_code == status, response.content
    if fragment:
        assert fragment in response.json()["error"] and AnalysisJob.objects.count() == 0
    else:
        expected = settings.SIGHTLINE_ENGINE_NODES if value is None else value
        assert AnalysisJob.objects.get(pk=response.json()["id"]).engine_nodes == expected


def test_the_form_takes_the_engine_budget(client, material_network, monkeypatch):
    monkeypatch.setattr("workers.dispatch.send_task", lambda *a, **k: None)
    form = {"pgn": "1. e4 *", "network": "material", "search": "value"}
    refused = client.post("/", {**form, "engine_nodes": "3000000"})
    assert refused.status_code == 400 and "out of range" in refused.context["form"].errors["engine_nodes"][0]
    assert AnalysisJob.objects.count() == 0
    assert client.post("/", {**form, "engine_nodes": "0"}).status_code == 302
    assert AnalysisJob.objects.get().engine_nodes == 0


def test_disagreements_are_sorted_by_the_gap_and_name_both_moves(material_network):
    require_stockfish()
    job, _ = analysed(material_network)
    snapshot = job_snapshot(job)
    listed = snapshot["disagreements"]
    assert [d["node"] for d in listed] and sorted(d["node"] for d in listed) == [n["id"] for n in job.nodes]
    assert [d["gap"] for d in listed] == sorted((d["gap"] for d in listed), reverse=True)
    for entry in listed:
        results = snapshot["results"][str(entry["node"])]
        network = results["search"]["score"]
        assert entry["gap"] == pytest.approx(abs(network - results["engine"]["score"]), abs=1e-3)
        assert entry["engine_best"] == results["engine"]["best"]
        assert entry["same_move"] == (entry["policy_top"] == entry["engine_best"])


def test_a_network_whose_value_swings_with_the_side_to_move_is_flagged(material_network):
    job = create_job(parse_pgn("1. e4 *"), material_network, "value", 1, dispatch=False)
    assert job_snapshot(job).get("network_swing") is None  # no value-quality figures on its card
    for bias, swings in ((-0.123, True), (0.004, False)):
        material_network.metrics = {"value_quality": {"overall": {"mae": 0.1, "side_to_move_bias": bias}}}
        material_network.save()
        job.refresh_from_db()
        swing = job_snapshot(job)["network_swing"]
        assert swing["swings"] is swings and swing["bias"] == bias
        assert ("smoothed over two plies" in swing["message"]) is swings
