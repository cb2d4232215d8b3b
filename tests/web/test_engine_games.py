"""The three games of issue 29 get their marks from Stockfish: every mark is lichess's rule applied to
the engine's own values (recomputed here from the stored values; a ? or ?? confirmed at a deeper budget
may only stay or be lowered), the moves the issue names are
marked as a strong engine marks them, and each player's review is complete."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from analysis.evaluator import MaterialEvaluator
from analysis.game_review import Eval, mark
from tests.conftest import require_stockfish
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.live.messages import job_snapshot
from webapp.jobs.review import main_line
from webapp.jobs.run.mark_confirmation import CHECKED, SEVERITY
from webapp.jobs.run.runner import JobRun

pytestmark = pytest.mark.django_db
GAMES = Path(__file__).resolve().parent.parent / "data" / "games"
NODES = 50_000
# (file, {ply: mark the engine must give}, plies the issue says were wrongly marked "??": no mark)
CASES = [
    ("elephant-trap-blitz.pgn", {11: "??"}, []),  # 6. Nxd5?? loses the queen to 6...Nxd5 7. Bxd8 Bb4+
    ("byrne-fischer-1956.pgn", {}, [22, 34]),  # 11...Na4!! and 17...Be6!!
    ("kasparov-topalov-1999.pgn", {}, [47, 73]),  # 24. Rxd4!! and 37. Rd7
]


def lichess_glyph(before: dict, after: dict, played_is_best: bool) -> str | None:
    """lichess's CpAdvice, written out again: the drop in winning chances, centipawns ceiled at 1000."""
    if played_is_best:
        return None
    if before["mate"] is not None or after["mate"] is not None:
        verdict = mark(Eval(before["cp"], before["mate"]), Eval(after["cp"], after["mate"]))
        return verdict.glyph if verdict else None
    chance = lambda cp: 2 / (1 + math.exp(-0.00368208 * max(-1000, min(1000, cp)))) - 1  # noqa: E731
    drop = chance(before["cp"]) - chance(-after["cp"])
    return "??" if drop >= 0.3 else "?" if drop >= 0.2 else "?!" if drop >= 0.1 else None


@pytest.mark.parametrize("name, marked, unmarked", CASES, ids=[c[0].split(".")[0] for c in CASES])
def test_the_issues_games_get_the_engines_marks(material_network, name, marked, unmarked):
    require_stockfish()
    job = create_job(parse_pgn((GAMES / name).read_text()), material_network, "value", 1, dispatch=False,
                     engine_nodes=NODES)
    job = JobRun(job, MaterialEvaluator(), lambda kind, payload: None).run()
    assert job.status == "done" and job.engine_note == "", job.engine_note
    snapshot = job_snapshot(job)
    results = snapshot["results"]
    line = main_line(job.nodes)
    glyphs = {}
    for node in line[1:]:
        parent = line[node["ply"] - 1]
        shown = results[str(node["id"])]["judgement"]
        before, after = _stored(results[str(parent["id"])]["engine"], parent), _stored(results[str(node["id"])]["engine"], node)
        assert shown["source"] == "engine"
        expected = lichess_glyph(before, after, node["uci"] == before["best"])
        if "shallow_glyph" in shown:  # a ? or ?? at the lane's budget, searched again deeper before it is shown
            assert shown["shallow_glyph"] == expected and expected in CHECKED and shown["confirm_nodes"] > NODES
            assert SEVERITY[shown["glyph"]] <= SEVERITY[expected], node["san"]  # kept or lowered, never raised
        else:
            assert shown["glyph"] == expected, node["san"]
        glyphs[node["ply"]] = shown["glyph"]
    assert {ply: glyphs[ply] for ply in marked} == marked
    assert all(glyphs[ply] is None for ply in unmarked), {ply: glyphs[ply] for ply in unmarked}
    review = snapshot["review"]["engine"]
    assert review["complete"] and review["plies"] == len(line) - 1
    for colour in ("white", "black"):
        counted = sum(1 for ply, g in glyphs.items() if g and (ply % 2 == 1) == (colour == "white"))
        figures = review[colour]
        assert figures["inaccuracies"] + figures["mistakes"] + figures["blunders"] == counted
        assert 0 <= figures["accuracy"] <= 100 and figures["acpl"] >= 0


def _stored(white_view: dict, node: dict) -> dict:
    """The engine's value for the side to move again (the snapshot sends White's)."""
    if node["fen"].split()[1] == "w":
        return white_view
    return {**white_view, "cp": None if white_view["cp"] is None else -white_view["cp"],
            "mate": None if white_view["mate"] is None else -white_view["mate"]}
