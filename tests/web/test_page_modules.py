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
    got = run_module(imports("format.js", "mateInLine") + f"console.log(JSON.stringify({call}));")
    assert got == mate


def test_the_eval_text_at_a_mate_in_one_is_the_mate():
    nodes = [{"id": 0, "fen": "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4", "outcome": None}]
    got = run_module(imports("results.js", "Results") +
                     f"const r = new Results({json.dumps(nodes)}, 0.00368208);"
                     "r.merge(0, { search: { score: 1.0, mate: null, pv_san: ['Qxf7#'] } });"
                     "console.log(JSON.stringify(r.evalText(0)));")
    assert got == "#1"


def test_the_search_rate_between_positions_keeps_the_last_one():
    got = run_module(imports("status.js", "searchRate") +
                     "const rates = [searchRate([{ nps: 900 }], 0), searchRate([{ nps: 900 }, { nps: 0 }], 900),"
                     " searchRate([], 900), searchRate([{ nps: 0 }], 0)];"
                     "console.log(JSON.stringify(rates));")
    assert got == [900, 900, 900, 0]


def test_a_single_positions_graph_has_no_fractional_ply_axis():
    got = run_module(imports("graph.js", "plyAxis")
                     + "console.log(JSON.stringify([plyAxis([19]), plyAxis([0, 1, 2, 3])]));")
    single, game = got
    assert single["showticklabels"] is False and single["tickformat"] == "d"
    assert game["dtick"] == 1 and game["tick0"] == 0 and game["showticklabels"] is True


def test_the_legend_names_each_colour_of_mark_drawn():
    game = {"nodes": [{"id": i, "ply": i, "san": san, "parent": i - 1 if i else None, "fen": "x w"}
                      for i, san in enumerate(["", "e4", "f6", "d4", "g5", "Qh5#"])]}
    glyphs = {2: "?!", 4: "??"}
    got = run_module(imports("graph.js", "markTraces") +
                     f"const game = {json.dumps(game)}, glyphs = {json.dumps(glyphs)};"
                     "game.results = { judgement: (id) => glyphs[id] ? { glyph: glyphs[id] } : null, score: () => 0.5 };"
                     "const traces = markTraces(game, [0, 1, 2, 3, 4, 5]);"
                     "console.log(JSON.stringify(traces.map((t) => [t.name, t.showlegend, t.marker.color, t.x])));")
    assert got == [["?! inaccuracy", True, "#e6b800", [2]], ["? mistake", False, "#f28c28", []],
                   ["?? blunder", True, "#d62728", [4]]]
