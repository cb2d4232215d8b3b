"""The websocket messages: one dataclass per kind, the JSON of each round-trips, the page's one
dispatcher handles every kind the server sends, and every value goes out as White's."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from types import SimpleNamespace

import chess
import pytest

from tests.conftest import ROOT, _missing
from tests.web.conftest import SHORT_GAME
from tests.web.test_task import run
from webapp.jobs.gameinput import parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.live.messages import (MESSAGES, REPLIES, Deep, Engine, EngineDeep, Error, Judgements, Live, NodeEngine, NodeEval,
                                      NodeJudgement, Nodes, Plies, Ply, Pong, Progress, Snapshot, Status,
                                      job_snapshot)
from webapp.jobs.models import AnalysisJob
from webapp.jobs.live.publish import encode
from webapp.jobs.results import job_results
from webapp.networks.model_cache import ModelCache

SCRIPTS = ROOT / "static" / "sightline"
EVAL = {"score": 0.61, "wdl": [0.4, 0.42, 0.18], "policy": [["e2e4", 0.5, "e4"]], "action_values": {"e2e4": 0.62}}
JUDGEMENT = {"played": "a7a6", "best": "e7e5", "best_san": "e5", "best_score": 0.55, "played_score": 0.4,
             "bound": "upper", "drop": 0.15, "source": "search", "glyph": "??", "name": "blunder"}
ENGINE = {"cp": 35, "mate": None, "score": 0.532, "win": 53.2, "best": "d2d4", "best_san": "d4", "pv": ["d2d4"],
          "pv_san": ["d4"], "depth": 16, "nodes": 100012}
ENGINE_JUDGEMENT = {**JUDGEMENT, "source": "engine", "bound": "exact", "reason": ""}
STATUS = Status(status="running", evaluated=3, searched=1, total=9, error=None, search="mcts", budget=64)
EXAMPLES = [
    STATUS,
    Snapshot(job=STATUS, results={"0": {"eval": EVAL}}),
    Ply(node=2, search={"bestmove": "g1f3", "score": 0.3, "mate": None, "root": [{"move": "g1f3", "q": 0.3}]}),
    Plies(items=[NodeEval(0, EVAL), NodeEval(1, EVAL)]),
    Judgements(items=[NodeJudgement(4, JUDGEMENT, JUDGEMENT), NodeJudgement(5, network_judgement=JUDGEMENT)]),
    Engine(items=[NodeEngine(4, ENGINE, ENGINE_JUDGEMENT), NodeEngine(5, ENGINE)]),
    Progress(node=3, nodes=120, nps=900, elapsed_s=0.13, best="e2e4", pv_san=["e4", "e5"], score=0.52, depth=2),
    Nodes(items=[{"id": 9, "parent": 8, "ply": 5, "san": "Bc4", "uci": "f1c4", "fen": "8/8/8/8/8/8/8/8 b - - 0 1"}]),
    Deep(deep=7, node=1, budget=0, status="running", nodes=300, nps=1000, elapsed_s=0.3, depth=3, best="e7e5",
         score=0.48, lines=[{"move": "e7e5", "san": "e5", "visits": 30, "prior": 0.2, "q": 0.48, "score": None,
                             "wdl": [0.3, 0.4, 0.3], "pv_san": ["e5"]}]),
    Deep(deep=7, node=1, budget=100, status="failed", final=True, error="RuntimeError: out of memory"),
    EngineDeep(deep=8, node=1, budget=0, lines_asked=2, max_seconds=60, status="running", engine="Stockfish 17",
               depth=14, seldepth=20, nodes=900_000, nps=450_000, elapsed_s=2.0,
               lines=[{**ENGINE, "rank": 1}, {**ENGINE, "rank": 2, "cp": 12, "best": "g1f3"}]),
    EngineDeep(deep=8, node=1, budget=1_000_000, lines_asked=3, max_seconds=60, status="failed", final=True,
               error="Stockfish could not be started"),
    Live(state="lost", message="Live updates are paused"),
    Pong(t=12.5),
    Error(error="the message is not JSON"),
]


def test_every_kind_has_an_example():
    assert {type(m) for m in EXAMPLES} == set(MESSAGES.values())
    assert all(kind == cls.kind for kind, cls in MESSAGES.items())


@pytest.mark.parametrize("message", EXAMPLES, ids=lambda m: m.kind)
def test_the_json_of_each_message_round_trips(message):
    channel = encode(message.kind, message.to_json())  # as a worker publishes it
    body = json.loads(channel["text"])
    assert channel["type"] == f"job.{message.kind}"
    assert body.pop("kind") == message.kind and body.pop("sent_at_ms") > 0
    assert MESSAGES[message.kind].from_json(body) == message
    sent = json.loads(json.dumps(message.wire()))  # as the consumer sends it
    assert MESSAGES[sent.pop("kind")].from_json(sent) == message


def test_a_part_left_unset_is_left_out():
    assert Ply(node=2, search={"score": 0.3}).to_json() == {"node": 2, "search": {"score": 0.3}}
    assert "final" not in EXAMPLES[8].to_json() and EXAMPLES[9].to_json()["final"] is True
    assert Status.of(SimpleNamespace(status="done", evaluated=1, searched=1, total_positions=0, nodes=[{}],
                                     error="", search="value", budget=1, engine_nodes=0, engine_name="",
                                     engine_note="")).to_json()["total"] == 1
    assert Judgements(items=[NodeJudgement(5, network_judgement=JUDGEMENT)]).to_json() == \
        {"items": [{"node": 5, "network_judgement": JUDGEMENT}]}


# kind -> the handler's calls on the page, recorded by a stand-in for the GamePage.
DISPATCH = """
import { HANDLERS, dispatch } from "%s";
const calls = [];
const recorder = (path) => new Proxy(function () {}, {
  get: (target, prop) => (prop === "messages" ? 0 : recorder([...path, prop])), set: () => true,
  apply: () => { calls.push(path); },
});
const out = {};
const warn = console.warn;
for (const kind of Object.keys(HANDLERS)) {
  calls.length = 0;
  console.warn = () => calls.push(["console.warn"]);
  dispatch(recorder([]), { kind, items: [] });
  out[kind] = calls.map((p) => p.join("."));
}
calls.length = 0;
dispatch(recorder([]), { kind: "no-such-kind" });
console.warn = warn;
console.log(JSON.stringify({ handled: out, unknown: calls.map((p) => p.join(".")) }));
"""


def node_script(script: str) -> dict:
    node = shutil.which("node")
    if node is None:
        _missing("node is not installed (apt-get install nodejs)")
    out = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def defines_method(module: str, name: str) -> bool:
    return re.search(rf"^\s+(async\s+)?{name}\(", (SCRIPTS / module).read_text(), re.M) is not None


def test_the_pages_dispatcher_handles_every_kind_the_server_sends():
    result = node_script(DISPATCH % (SCRIPTS / "game" / "socket.js").as_uri())
    handled = result["handled"]
    # Replies answer a client's own message (a ping); the page sends none.
    assert set(handled) == set(MESSAGES) - REPLIES
    assert "ping" not in (SCRIPTS / "game" / "socket.js").read_text() + (SCRIPTS / "game" / "game.js").read_text()
    for kind, calls in handled.items():
        assert len(calls) == 1, (kind, calls)
        *owner, method = calls[0].split(".")
        if owner == ["console"]:
            continue
        module = {(): "game/game.js", ("deeper",): "game/deeper.js", ("engineDeeper",): "game/engine_deeper.js"}[tuple(owner)]
        assert defines_method(module, method), f"{kind}: {calls[0]} is not defined in {module}"
    assert result["unknown"] == ["console.warn"]  # said, not thrown


# -- point of view: stored for the side to move, sent as White's -------------------------------
def white_to_move(job, node_id: int) -> bool:
    return job.nodes[node_id]["fen"].split()[1] == "w"


def as_white(value, white: bool):
    return value if white or value is None else 1.0 - value


@pytest.mark.django_db
def test_every_value_goes_out_as_whites(tiny_network):
    job = create_job(parse_pgn(SHORT_GAME), tiny_network, "mcts", 8, dispatch=False)
    finished, messages = run(job, ModelCache().get(tiny_network))
    assert finished.status == "done", finished.error
    stored = job_results(finished)
    flipped = set()
    for kind, payload in messages:
        if kind == "plies":
            for item in payload["items"]:
                white, ev = white_to_move(finished, item["node"]), stored[item["node"]]["eval"]
                assert item["eval"]["score"] == as_white(ev["score"], white)
                assert item["eval"]["wdl"] == (ev["wdl"] if white else ev["wdl"][::-1])
                assert "extras" not in item["eval"] and item["eval"]["policy"] == ev["policy"]
                flipped.add(white)
        elif kind == "ply":
            white, search = white_to_move(finished, payload["node"]), stored[payload["node"]]["search"]
            assert payload["search"]["score"] == as_white(search["score"], white)
            assert [r["q"] for r in payload["search"]["root"]] == [as_white(r["q"], white) for r in search["root"]]
            assert "root_values" not in payload["search"] and payload["search"]["bestmove"] == search["bestmove"]
        elif kind == "judgements":
            for item in payload["items"]:
                mover = not white_to_move(finished, item["node"])
                j, kept = item["judgement"], stored[item["node"]]["judgement"]
                assert j["played_score"] == as_white(kept["played_score"], mover)
                assert j["best_score"] == as_white(kept["best_score"], mover) and j["drop"] == kept["drop"]
    assert flipped == {True, False}
    # The page's JSON (its data, the state endpoint, the socket's first message) says the same.
    snapshot = job_snapshot(AnalysisJob.objects.get(pk=job.pk))
    sent = {item["node"]: item["eval"] for kind, p in messages if kind == "plies" for item in p["items"]}
    assert {int(k): v["eval"] for k, v in snapshot["results"].items()} == sent


def test_a_black_to_move_search_is_sent_as_whites():
    board = chess.Board()
    board.push_uci("e2e4")
    snapshot = SimpleNamespace(nodes=50, nps=500, elapsed_s=0.1, best_move=chess.Move.from_uci("e7e5"),
                               pv=[chess.Move.from_uci("e7e5")], score=0.25, depth=1)
    assert Progress.of(1, snapshot, board).score == 0.75
    search = {"score": 0.25, "wdl": [0.1, 0.3, 0.6], "mate": 3, "root": [{"move": "e7e5", "q": 0.25, "score": None}],
              "root_values": {"e7e5": [0.25, "exact"]}}
    node = {"id": 1, "fen": board.fen()}
    sent = Ply.of(node, search=search).search
    assert sent["score"] == 0.75 and sent["wdl"] == [0.6, 0.3, 0.1] and sent["mate"] == -3
    assert sent["root"] == [{"move": "e7e5", "q": 0.75, "score": None}] and "root_values" not in sent
    # A judgement of Black's move: White's scores, the bound on White's score, the mover's drop.
    after = {"id": 2, "fen": chess.Board("rnbqkbnr/p1pppppp/8/1p6/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2").fen()}
    [item] = Judgements.of([(after, JUDGEMENT)]).items
    assert item.judgement["played_score"] == pytest.approx(0.6) and item.judgement["best_score"] == pytest.approx(0.45)
    assert item.judgement["bound"] == "lower" and item.judgement["drop"] == 0.15
    lines = {"nodes": 9, "nps": 9, "elapsed_s": 0.1, "depth": 1, "best": "e7e5", "score": 0.123456789,
             "lines": [{"move": "e7e5", "q": 0.25, "score": None, "wdl": [0.11111, 0.3, 0.58889]}]}
    deep = Deep.of({"deep": 1, "node": 1, "budget": 10}, lines, False, status="done", final=True)
    assert deep.score == round(1 - 0.123456789, 5)
    assert deep.lines[0]["q"] == 0.75 and deep.lines[0]["wdl"] == [0.5889, 0.3, 0.1111]
