"""The game page's pure parts, run in node: the mate a search's line shows, the search rate between
positions, the graph's ply axis and its legend of marks (issue 29's defects)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests.conftest import ROOT, _missing

STATIC = ROOT / "static" / "sightline"


def run_module(script: str):
    node = shutil.which("node") or _missing("node is not installed (apt-get install nodejs)")
    out = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def imports(module: str, *names: str) -> str:
    return f"import {{ {', '.join(names)} }} from '{(STATIC / module).as_uri()}';"


@pytest.mark.parametrize("search, white_moves, mate", [
    ({"score": 1.0, "mate": None, "pv_san": ["Qxf7#"]}, True, 1),  # Scholar's mate: "+100 (100.0%)" before
    ({"score": 0.0, "mate": None, "pv_san": ["Qh4#"]}, False, -1),  # Black mates
    ({"score": 1.0, "mate": None, "pv_san": ["Rd8+", "Kh7", "Qh5#"]}, True, 2),
    ({"score": 0.0, "mate": None, "pv_san": ["Kg8", "Qh7#"]}, False, 1),  # the side to move is mated
    ({"score": 1.0, "mate": None, "pv_san": [], "best_san": "Qxf7#"}, True, 1),
    ({"score": 0.7, "mate": 3, "pv_san": ["Nf3"]}, True, 3),  # the search's own distance stands
    ({"score": 0.9, "mate": None, "pv_san": ["Nf3", "Nc6"]}, True, None),
])
def test_a_mate_on_the_search_line_is_shown_as_a_mate(search, white_moves, mate):
    call = f"mateInLine({json.dumps(search)}, {json.dumps(white_moves)})"
    got = run_module(imports("lib/format.js", "mateInLine") + f"console.log(JSON.stringify({call}));")
    assert got == mate


def test_the_eval_text_at_a_mate_in_one_is_the_mate():
    nodes = [{"id": 0, "fen": "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4", "outcome": None}]
    got = run_module(imports("game/results.js", "Results") +
                     f"const r = new Results({json.dumps(nodes)}, 0.00368208);"
                     "r.merge(0, { search: { score: 1.0, mate: null, pv_san: ['Qxf7#'] } });"
                     "console.log(JSON.stringify(r.evalText(0)));")
    assert got == "#1"


def test_the_search_rate_between_positions_keeps_the_last_one():
    got = run_module(imports("game/status.js", "searchRate") +
                     "const rates = [searchRate([{ nps: 900 }], 0), searchRate([{ nps: 900 }, { nps: 0 }], 900),"
                     " searchRate([], 900), searchRate([{ nps: 0 }], 0)];"
                     "console.log(JSON.stringify(rates));")
    assert got == [900, 900, 900, 0]


def test_a_single_positions_graph_has_no_fractional_ply_axis():
    got = run_module(imports("game/graph.js", "plyAxis")
                     + "console.log(JSON.stringify([plyAxis([19]), plyAxis([0, 1, 2, 3])]));")
    single, game = got
    assert single["showticklabels"] is False and single["tickformat"] == "d"
    assert game["dtick"] == 1 and game["tick0"] == 0 and game["showticklabels"] is True


def legend_of_marks(glyphs: dict, source: str, view: str = "engine") -> list:
    game = {"nodes": [{"id": i, "ply": i, "san": san, "parent": i - 1 if i else None, "fen": "x w"}
                      for i, san in enumerate(["", "e4", "f6", "d4", "g5", "Qh5#"])], "marksView": view}
    return run_module(imports("game/graph.js", "markTraces") +
                      f"const game = {json.dumps(game)}, glyphs = {json.dumps(glyphs)}, source = {json.dumps(source)};"
                      "game.results = { judgement: (id, view) => glyphs[id] && view === game.marksView"
                      " ? { glyph: glyphs[id], source } : null, score: () => 0.5, engineScore: () => 0.25 };"
                      "const traces = markTraces(game, [0, 1, 2, 3, 4, 5]);"
                      "console.log(JSON.stringify(traces.map((t) => [t.name, t.showlegend, t.marker.color, t.x, t.y])));")


def test_the_legend_names_each_colour_of_mark_drawn():
    got = legend_of_marks({2: "?!", 4: "??"}, "engine")
    assert got == [["?! inaccuracy", True, "#e6b800", [2], [0.25]], ["? mistake", False, "#f28c28", [], []],
                   ["?? blunder", True, "#d62728", [4], [0.25]]]  # the engine's marks sit on the engine's line


def test_a_mark_at_the_graphs_edge_is_drawn_whole():
    """A blunder into a mate sits at 0% or 100% on the engine's line: Plotly clipped it in half."""
    game = {"nodes": [{"id": 0, "ply": 0, "san": "", "parent": None}, {"id": 1, "ply": 1, "san": "f3", "parent": 0}],
            "marksView": "engine"}
    got = run_module(imports("game/graph.js", "markTraces") + f"const game = {json.dumps(game)};"
                     "game.results = { judgement: (id) => id === 1 ? { glyph: '??', source: 'engine' } : null,"
                     " score: () => 0.5, engineScore: () => 0 };"
                     "console.log(JSON.stringify(markTraces(game, [0, 1]).map((t) => [t.y, t.cliponaxis])));")
    assert got == [[[], False], [[], False], [[0], False]]


def test_the_networks_marks_are_never_named_in_lichesss_words():
    got = legend_of_marks({3: "?"}, "search", view="network")
    assert [name for name, *_ in got] == ["?! network's opinion", "? network's opinion", "?? network's opinion"]
    assert got[1][3] == [3] and got[1][4] == [0.5]  # the network's on the network's line


@pytest.mark.parametrize("engine, outcome, text", [
    ({"cp": 35, "mate": None}, None, "+0.35"),
    ({"cp": -250, "mate": None}, None, "−2.5"),
    ({"cp": None, "mate": 3}, None, "#3"),  # White mates in 3
    ({"cp": None, "mate": -2}, None, "#-2"),  # Black mates in 2
    ({"cp": None, "mate": 0}, {"result": "1-0"}, "1-0"),  # checkmate on the board: the result
    (None, None, None),
])
def test_the_engines_figure_is_pawns_or_a_mate(engine, outcome, text):
    call = f"engineFigure({json.dumps(engine)}, {json.dumps(outcome)})"
    assert run_module(imports("game/results.js", "engineFigure") + f"console.log(JSON.stringify({call}));") == text


@pytest.mark.parametrize("engine, outcome, text", [
    ({"nodes": 100009, "depth": 15}, None, "100k nodes · depth 15"),
    ({"nodes": 1000}, None, "1000 nodes"),
    ({"nodes": 0, "cp": None, "mate": 0}, {"result": "1-0"}, "the game is over: the rules' result, no search"),
])
def test_the_engines_effort_is_its_nodes_or_that_the_game_is_over(engine, outcome, text):
    call = f"engineEffort({json.dumps(engine)}, {json.dumps(outcome)})"
    assert run_module(imports("game/results.js", "engineEffort") + f"console.log(JSON.stringify({call}));") == text


@pytest.mark.parametrize("body, positions, text", [
    ({"seconds_per_position": 0.5, "basis": "measured", "engine": None}, 41,
     "About 500 ms per position (measured); this game: 41 positions, about 21 s for the network."),
    ({"seconds_per_position": 0.5, "basis": "measured", "engine": {"seconds_per_position": 0.4, "basis": "timed"}}, 41,
     "About 500 ms per position (measured); Stockfish beside it, about 400 ms per position (timed); "
     "this game: 41 positions, about 21 s for the network and 16 s for Stockfish."),
    ({"seconds_per_position": 0.5, "basis": "measured", "engine": {"seconds_per_position": None, "basis": "not timed"}}, 1,
     "About 500 ms per position (measured); Stockfish beside it: not timed; this game: 1 position, about 500 ms for the network."),
    ({"seconds_per_position": None, "basis": "no measurement yet", "engine": {"seconds_per_position": 0.4, "basis": "timed"}}, 0,
     "Network: no measurement yet; Stockfish beside it, about 400 ms per position (timed)."),
])
def test_the_home_forms_estimate_gives_stockfishs_share_beside_the_networks(body, positions, text):
    call = f"estimateText({json.dumps(body)}, {positions})"
    assert run_module(imports("pages/home.js", "estimateText") + f"console.log(JSON.stringify({call}));") == text


def test_the_networks_line_smoothed_over_two_plies_cancels_a_side_to_move_bias():
    # A network that adds 0.1 for the side to move: White's score swings 0.6, 0.4, 0.6, ... about 0.5.
    got = run_module(imports("game/graph.js", "smoothTwoPlies") +
                     "console.log(JSON.stringify(smoothTwoPlies([0.6, 0.4, 0.6, null, 0.4, 0.6])));")
    assert got == [0.6, 0.5, 0.5, None, 0.4, 0.5]


def test_disagreements_sort_by_gap_or_by_the_move_first():
    items = [{"node": 1, "gap": 0.1, "same_move": False}, {"node": 2, "gap": 0.3, "same_move": True},
             {"node": 3, "gap": 0.2, "same_move": False}]
    got = run_module(imports("compare/disagreements.js", "sortDisagreements") +
                     f"const items = {json.dumps(items)};"
                     "console.log(JSON.stringify([sortDisagreements(items, 'gap'), sortDisagreements(items, 'move')]"
                     ".map((l) => l.map((d) => d.node))));")
    assert got == [[2, 3, 1], [3, 1, 2]]


def test_the_review_table_has_each_players_figures_and_the_networks_counts_its_glyphs():
    player = lambda acc, acpl, i, m, b: {"accuracy": acc, "acpl": acpl, "inaccuracies": i, "mistakes": m,
                                         "blunders": b, "moves": 10}  # noqa: E731
    engine = {"white": player(91.2, 18, 1, 0, 0), "black": player(None, None, 0, 1, 2)}
    got = run_module(imports("compare/review.js", "reviewRows", "networkCounts") +
                     f"console.log(JSON.stringify([reviewRows({json.dumps(engine)}),"
                     " networkCounts({ inaccuracies: 3, mistakes: 1, blunders: 0 })]));")
    rows, counts = got
    assert rows == [["Accuracy", "91.2%", "–"], ["Average centipawn loss", "18", "–"], ["Inaccuracies", "1", "0"],
                    ["Mistakes", "0", "1"], ["Blunders", "0", "2"]]
    assert counts == "?! 3 · ? 1 · ?? 0"


# Byrne-Fischer 1956 after 11...Na4 (White to move) and after 41...Rc2# (White mated); scores are White's.
AFTER_NA4 = {"san": "Na4", "ply": 22, "fen": "r2q1rk1/pp2ppbp/1bp2np1/2Q3B1/n2PP1b1/2N2N2/PP3PPP/3RKB1R w K - 3 12"}
AFTER_RC2 = {"san": "Rc2#", "ply": 82, "fen": "1Q6/5pk1/2p3p1/1p2N2p/1b5P/1bn5/2r3P1/2K5 w - - 16 42"}


@pytest.mark.parametrize("node, judgement, words", [
    # Black's Na4 took White from 50.0% to 32.7%: better for Black than the engine's own choice.
    (AFTER_NA4, {"played": "b6a4", "best": "f8e8", "best_san": "Re8", "best_score": 0.5, "played_score": 0.327},
     "Na4: as good as Re8, the engine's choice, or better (50.0% before, 32.7% after Na4, White's win %)"),
    # Two mates in one: the played one is as good as the engine's.
    (AFTER_RC2, {"played": "a2c2", "best": "b4a3", "best_san": "Ba3#", "best_score": 0.025, "played_score": 0.025},
     "Rc2#: as good as Ba3#, the engine's choice, or better (2.5% before, 2.5% after Rc2#, White's win %)"),
    # A small loss below the marks' first step: the engine's move was best.
    ({**AFTER_NA4, "ply": 22}, {"played": "b6a4", "best": "f8e8", "best_san": "Re8", "best_score": 0.5, "played_score": 0.53},
     "Re8 was best (50.0% vs 53.0% after Na4, White's win %)"),
])
def test_an_unmarked_move_better_than_the_engines_choice_is_not_called_worse(node, judgement, words):
    j = {**judgement, "source": "engine", "glyph": None, "name": None, "reason": "", "bound": "exact"}
    got = run_module(imports("game/moves.js", "judgementTitle") + f"console.log(JSON.stringify(judgementTitle({json.dumps(j)}, "
                     f"{json.dumps(node)}, 'policy')));")
    assert got.startswith(words)


def test_the_progress_counts_the_engine_lane_while_it_runs():
    """The network's part done, the engine a quarter through: not "almost done", and the bar not full."""
    got = run_module(imports("game/status.js", "progress") + "console.log(JSON.stringify(["
                     "progress({engine_nodes: 100000, engine_note: ''}, [80, 80, 20], 80),"
                     "progress({engine_nodes: 0, engine_note: ''}, [80, 80, 0], 80),"
                     "progress({engine_nodes: 100000, engine_note: 'No engine line: Stockfish is not installed'}, [80, 80, 0], 80)]));")
    running, off, missing = got
    assert running == {"text": "eval 80/80 · search 80/80 · engine 20/80", "frac": 0.75, "done": 20, "engine": True}
    assert off == missing == {"text": "eval 80/80 · search 80/80", "frac": 1, "done": 80, "engine": False}


def test_the_time_left_is_not_the_networks_estimate_while_the_engine_runs():
    """Before the engine's first value the only rate was the network's measured cost per position:
    "almost done" with Stockfish at 0 of 36."""
    got = run_module(imports("game/status.js", "JobStatus") +
                     "const game = { page: { estimate: { seconds_per_position: 0.001 } } };"
                     "const a = new JobStatus(game), b = new JobStatus(game);"
                     "console.log(JSON.stringify([a.secondsLeft(0, 36, 1000, true), b.secondsLeft(0, 36, 1000, false)]));")
    assert got[0] is None and got[1] == pytest.approx(0.036)


FAKE_DOCUMENT = ("const els = {}; globalThis.document = { getElementById: (id) => (els[id] ??= { id, hidden: false,"
                 " innerHTML: '', textContent: '', title: '' }) };")


@pytest.mark.parametrize("children, status, caption", [
    ([], {"status": "done", "engine_nodes": 100000}, "A single position: no moves to review."),
    ([1], {"status": "running", "engine_nodes": 100000}, "Waiting for the engine's values…"),
    ([1], {"status": "cancelled", "engine_nodes": 100000}, "No review: the analysis ended before the engine valued the game's moves."),
])
def test_a_review_without_figures_says_why_and_never_waits_on_a_finished_job(children, status, caption):
    """A FEN-only job, done, said "Waiting for the engine's values…" for ever, with the network's marks at 0."""
    game = {"nodes": [{"id": 0, "children": children}], "status": {**status, "engine_note": ""},
            "page": {"headers": {}, "network": {"name": "ag-cpu"}}}
    got = run_module(imports("compare/review.js", "GameReview") + FAKE_DOCUMENT +
                     f"const game = {json.dumps(game)}; game.engineNote = () => '';"
                     "const review = new GameReview(game);"
                     "review.update({ review: { engine: null, network_marks: { white: {}, black: {} } } });"
                     "console.log(JSON.stringify([els['review-caption'].textContent, els['review-network'].hidden]));")
    assert got == [caption, not children]


def test_the_marks_legend_says_which_marks_are_still_the_networks():
    """Live, the engine's view keeps the network's mark where the engine has not valued the move yet:
    the line under the moves called them all the reference engine's."""
    words = {"engineShort": "Marks: the reference engine's.", "engineLong": "E long.",
             "networkShort": "Marks: the network's.", "networkLong": "N long."}
    got = run_module(imports("game/moves.js", "marksLegend") + f"const w = {json.dumps(words)};"
                     "console.log(JSON.stringify([marksLegend(w, 'engine', true, true, 'cf-small'),"
                     " marksLegend(w, 'engine', true, false, 'cf-small'), marksLegend(w, 'network', true, true, 'cf-small'),"
                     " marksLegend(w, 'engine', false, true, 'cf-small')]));")
    mixed, engine_only, network_view, no_engine = got
    assert mixed[0] == "Marks: the reference engine's. Marks in italics are cf-small's opinion: the engine has not valued those moves."
    assert engine_only == ["Marks: the reference engine's.", "E long."]
    assert network_view == no_engine == ["Marks: the network's.", "N long."]


def test_a_network_judgement_puts_the_reviews_counts_behind():
    """With the engine off, the network's marks counted under the review stayed at the snapshot's
    (0 for a job watched from its start): only the engine's values made the page fetch them again."""
    game = {"nodes": [{"id": 0, "children": [1]}], "status": {"status": "running", "engine_nodes": 0, "engine_note": ""},
            "page": {"headers": {}, "network": {"name": "cf-small"}, "urls": {"state": "/state/"}}}
    got = run_module(imports("compare/review.js", "GameReview") + FAKE_DOCUMENT +
                     f"const game = {json.dumps(game)}; game.engineNote = () => '';"
                     "globalThis.setTimeout = () => 1; const review = new GameReview(game);"
                     "review.update({ review: { engine: null, network_marks: { white: {}, black: {} } } });"
                     "const before = review.stale; review.arrived({ node: 1, eval: { score: 0.5 } });"
                     "const evalOnly = review.stale;"
                     "review.arrived({ node: 1, judgement: { glyph: '?', source: 'network' } });"
                     "console.log(JSON.stringify([before, evalOnly, review.stale]));")
    assert got == [False, False, True]


# lib/poll.js against a scripted server: fetch answers from a list, time passes only in setTimeout.
FAKE_SERVER = """
let now = 0; const waits = [], asked = [];
Date.now = () => now;
globalThis.setTimeout = (done, ms) => { waits.push(ms); now += ms; done(); return 0; };
const answer = ([status, body, retry]) => new Response(JSON.stringify(body),
  { status, headers: retry === undefined ? {} : { "Retry-After": String(retry) } });
const script = (answers) => { globalThis.fetch = async (url) => { asked.push(url); return answer(answers.shift()); }; };
const outcome = (p) => p.then((body) => ({ body }), (e) => ({ error: e.message, kind: e.name, status: e.status }));
"""


def poll_outcome(answers: list, options: str = "{}", ask: str = "'/x/'") -> dict:
    return run_module(imports("lib/poll.js", "pollJson") + FAKE_SERVER + f"script({json.dumps(answers)});"
                      f"outcome(pollJson({ask}, {options})).then((o) => console.log(JSON.stringify({{ ...o, waits, asked }})));")


def test_poll_waits_out_pending_and_busy_answers_as_the_server_asks():
    """202 and 429 both wait the server's Retry-After (else a second) and ask again: the lc0 panel
    took a 429 (its queue full) for a failure."""
    got = poll_outcome([[202, {"status": "pending"}, 1], [429, {"error": "busy"}, 5], [202, {}], [200, {"ok": 1}]])
    assert got["body"] == {"ok": 1} and got["waits"] == [1000, 5000, 1000] and got["asked"] == ["/x/"] * 4


def test_poll_fails_with_the_servers_sentence_and_gives_up_at_the_deadline():
    failed = poll_outcome([[202, {}, 1], [503, {"error": "Computing the lens failed: out of memory"}, 5]])
    assert failed["error"] == "Computing the lens failed: out of memory" and failed["status"] == 503
    assert poll_outcome([[404, {}]])["error"] == "error 404"
    late = poll_outcome([[202, {}, 1]] * 5, "{ deadlineMs: 2500, tooLong: 'the split is taking too long' }")
    assert late["kind"] == "PollTimedOut" and late["error"] == "the split is taking too long" and late["waits"] == [1000, 1000]


def test_poll_stops_quietly_once_the_user_moved_on_and_lets_the_caller_choose_the_next_request():
    moved = poll_outcome([[202, {}, 1], [200, {"ok": 1}]], "{ current: () => asked.length < 2 }")
    assert moved["body"] is None and moved["asked"] == ["/x/", "/x/"]
    ask = "(pending) => fetch(pending?.poll ?? '/scan/?retry=1')"
    followed = poll_outcome([[202, {"poll": "/scan/7/"}, 1], [429, {"poll": "/scan/7/"}, 2], [200, {"top": []}]], ask=ask)
    assert followed["body"] == {"top": []} and followed["asked"] == ["/scan/?retry=1", "/scan/7/", "/scan/7/"]


@pytest.mark.parametrize("search, shown", [
    ({"nodes": 1, "nps": 614, "elapsed_s": 1.6277, "depth": None}, "1 node · 1.6 s"),  # a 1-ply search: no rate
    ({"nodes": 30, "nps": 12000, "elapsed_s": 0.0025}, "30 nodes · 3 ms"),
    ({"nodes": 20000, "nps": 5000, "elapsed_s": 4.0, "depth": 9}, "20k nodes · 5000 nodes/s · 4.0 s · depth 9"),
])
def test_a_searchs_effort_reads_as_words_with_a_rate_only_where_it_means_something(search, shown):
    got = run_module(imports("lib/format.js", "searchEffort") + f"console.log(JSON.stringify(searchEffort({json.dumps(search)})));")
    assert got == shown


def test_the_timelines_caption_names_a_move_outside_the_policy_list_in_san():
    """The played move (e.g. a move the policy's top list leaves out) is named as the game writes it."""
    game = {"nodes": [{"id": 0, "parent": None, "ply": 0, "san": "", "uci": "", "children": [1]},
                      {"id": 1, "parent": 0, "ply": 1, "san": "Nf3", "uci": "g1f3", "children": []}],
            "results": {}}
    timeline = {"final": "e2e4", "final_from": 3, "played": "g1f3", "played_from": None, "played_ranks": [9, 7]}
    script = (imports("lens/timeline.js", "DecisionTimeline")
              + f"const game = {json.dumps(game)}; game.results = new Map([[0, {{eval: {{policy: [['e2e4', 0.4, 'e4']]}}}}]]);"
              + f"const caption = DecisionTimeline.prototype.caption.call({{game}}, 0, {json.dumps(timeline)}, "
              + "['0.attn', '1.attn', '2.attn', '3.attn']);"
              + "console.log(JSON.stringify(caption));")
    caption = run_module(script)
    assert "settles on e4" in caption and "played Nf3: rank 7" in caption and "g1f3" not in caption
