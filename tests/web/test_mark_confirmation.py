"""Engine marks "?" and "??" are confirmed at a higher budget before they are shown (issue 37): a fake
engine (tests/fake_engine.py) that misjudges every move below 5,000 nodes, and one that never changes
its mind, with the rule itself on stored values."""

from __future__ import annotations

import pytest

from tests.fake_engine import write_fake_engine
from tests.web.conftest import SHORT_GAME
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.live.messages import job_snapshot
from webapp.jobs.results import job_results
from webapp.jobs.run.engine_pass import checked_judgement
from webapp.jobs.run.mark_confirmation import CONFIRMATION, confirmed, needs_confirmation
from webapp.jobs.run.runner import JobRun
from analysis.evaluator import MaterialEvaluator

pytestmark = pytest.mark.django_db
LANE_NODES = 1_000  # the fake engine misjudges below 5,000; the confirmation searches 8,000


def value(cp: int, best: str = "a2a3") -> dict:
    from analysis.game_review import win_percent

    return {"cp": cp, "mate": None, "score": round(win_percent(cp) / 100, 5), "best": best, "best_san": None}


def test_a_blunder_the_deeper_search_refutes_is_not_shown():
    shallow_before, shallow_after = value(0), value(400)  # the mover loses four pawns at the lane's budget
    assert checked_judgement("e2e4", shallow_before, shallow_after, None, None, 8000)["glyph"] is None
    refuted = checked_judgement("e2e4", shallow_before, shallow_after, value(30), value(-10), 8000)
    assert refuted["glyph"] is None and refuted["shallow_glyph"] == "??" and "8,000 nodes" in refuted["reason"]
    lowered = checked_judgement("e2e4", shallow_before, shallow_after, value(0), value(70), 8000)
    assert lowered["glyph"] == "?!" and lowered["shallow_glyph"] == "??"
    kept = checked_judgement("e2e4", shallow_before, shallow_after, value(0), value(500), 8000)
    assert kept["glyph"] == "??" and kept["confirm_nodes"] == 8000


def test_the_deeper_search_never_adds_a_mark():
    shallow = {"glyph": "?", "name": "mistake", "reason": ""}
    assert confirmed(shallow, {"glyph": "??", "name": "blunder"}, 8000)["glyph"] == "?"
    assert needs_confirmation(shallow) and not needs_confirmation({"glyph": "?!"}) and not needs_confirmation(None)
    assert checked_judgement("e2e4", value(0), value(70), None, None, 8000)["glyph"] == "?!"  # shown at once
    assert CONFIRMATION.nodes(100_000) == 800_000 and CONFIRMATION.nodes(2_000_000) == 2_000_000


@pytest.mark.parametrize("mode, shown", [("shallow", None), ("steady", "??")])
def test_the_lane_confirms_marks_before_they_are_shown(material_network, settings, tmp_path, mode, shown):
    path, _ = write_fake_engine(tmp_path, mode)
    settings.SIGHTLINE_ENGINE_PATH = str(path)
    job = create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False, engine_nodes=LANE_NODES)
    messages = []
    job = JobRun(job, MaterialEvaluator(), lambda kind, payload: messages.append((kind, payload))).run()
    assert job.status == "done" and job.engine_note == ""
    stored = job_results(job)
    judged = [stored[n["id"]]["engine_judgement"] for n in job.nodes if n["parent"] is not None]
    assert judged and all(j["shallow_glyph"] == "??" and j["glyph"] == shown for j in judged)
    assert all(j["confirm_nodes"] == 8 * LANE_NODES for j in judged)
    snapshot = job_snapshot(job)["results"]
    assert all(snapshot[str(n["id"])]["judgement"]["glyph"] == shown for n in job.nodes if n["parent"] is not None)
    # Live: no "??" went out before it was confirmed, and every move's last message is the confirmed mark.
    sent = [item for kind, payload in messages if kind == "engine" for item in payload["items"] if item.get("judgement")]
    assert all(item["judgement"]["glyph"] in (None, shown) for item in sent)
    last = {item["node"]: item["judgement"] for item in sent}
    assert {n["id"] for n in job.nodes if n["parent"] is not None} == set(last)
    assert all(j["glyph"] == shown and not j.get("confirming") for j in last.values())
