"""The lookahead method's patching on shipped networks: the positive control (at the last readout
point, patching the 1st move's target square costs the top move more than the 3rd target, the
corrupted squares or any other single square) on cf-shaw, the window maia-1900's policy reads
instead, a Black-to-move puzzle's effect on the real target
square and not its mirror, and the study's determinism, resumption and JSON contract (issue 38).

The puzzles (``tests/data/lookahead_puzzles.json``) are kept puzzles of the look-ahead set as the
study built them on the shipped 1,000-puzzle CSV (sparring net cf-small): inputs, not results; each
corrupted board is checked to be one of its puzzle's legal corruptions before it is used.
"""

from __future__ import annotations

import json

import chess
import pytest

from analysis.cli import main
from analysis.studies import PositionSource, StudySpec, StudyStopped, run_study
from analysis.studies import export
from analysis.studies.corruptions import changed_squares, corruptions
from analysis.studies.methods.lookahead import CURVES, square_sets
from analysis.studies.networks import load_network
from tests.conftest import ROOT

PUZZLES = json.loads((ROOT / "tests" / "data" / "lookahead_puzzles.json").read_text())
# The first rows of the shipped CSV's format: a puzzle neither net keeps (not correct for maia-1900)
# and FIZ4w (Black to move), which maia-1900 keeps with sparring net cf-small.
CSV = """PuzzleId,FEN,Moves,Rating,Themes
tewjc,r5k1/pp3p1p/2b2qp1/3pr3/8/4P2P/R1PN1PP1/Q3K2R w K - 0 19,a2a7 e5e3 f2e3 f6a1 a7a1 a8a1,1493,crushing long
FIZ4w,6k1/1p1n1ppp/2p2p2/5b2/P1PP4/2B1bN2/BP2r1PP/4R1K1 w - - 2 22,g1f1 e2f2 f1g1 f2f3,1488,crushing short
"""


def _last_point_drops(net: str, items: list[dict], sets_of) -> list[list[float]]:
    """Per puzzle, the drops of the square sets ``sets_of(item, clean, corrupted)`` at the last point."""
    from analysis.lens.patching import patched_drop

    evaluator, adapter, _ = load_network(net)
    out = []
    for item in items:
        clean, corrupted = chess.Board(item["fen"]), chess.Board(item["corrupted_fen"])
        first = chess.Move.from_uci(item["first"])
        assert corrupted.fen() in {c.fen for c in corruptions(clean, first)}
        top = evaluator.evaluate([clean])[0].best_move()
        drops = patched_drop(adapter, adapter.prepare(clean), adapter.prepare(corrupted), top,
                             adapter.readouts[-1], sets_of(item, clean, corrupted))
        out.append(drops.float().tolist())
    return out


def test_positive_control_first_target_is_largest_at_the_last_point():
    """cf-shaw's policy reads each move from its source and target squares' last stream (q . k), so
    there the 1st target outweighs the 3rd target, the corrupted squares and every other square."""
    items = PUZZLES["cf-shaw"][:12]
    assert len(items) >= 8

    def sets(item, clean, corrupted):
        return square_sets(chess.Move.from_uci(item["first"]), chess.Move.from_uci(item["third"]),
                           list(changed_squares(clean, corrupted)))[0]

    rows = _last_point_drops("cf-shaw", items, sets)
    means = {name: sum(r[i] for r in rows) / len(rows) for i, name in enumerate(CURVES[:3])}
    means["other_max"] = sum(max(r[3:]) for r in rows) / len(rows)
    assert max(means, key=means.get) == "first_target", means


def test_maia_policy_reads_a_window_around_the_source_square():
    """maia-1900's convolution policy (two 3x3 convs, then the move's plane at its source square) reads,
    at the last point, only squares within 2 (king steps) of a move's source: there the 1st target is
    the largest of the four curves only when it lies in that window (docs/lookahead.md). The check of
    the plumbing is then the window itself, on the real squares: every square outside the windows of
    all legal moves' sources changes nothing, and the 1st move's source square changes its log-odds."""
    items = PUZZLES["maia-1900"][:6]
    every = [[s] for s in chess.SQUARES]
    for item, row in zip(items, _last_point_drops("maia-1900", items, lambda *_: every)):
        board = chess.Board(item["fen"])
        sources = {m.from_square for m in board.legal_moves}
        for square, drop in enumerate(row):
            if min(chess.square_distance(square, s) for s in sources) > 2:
                assert abs(drop) < 1e-5, (item["id"], chess.square_name(square), drop)
        assert abs(row[chess.Move.from_uci(item["first"]).from_square]) > 0.01


@pytest.mark.parametrize("net", ["maia-1900", "cf-shaw"])
def test_black_to_move_effect_lands_on_the_real_squares(net):
    """Patching the 1st move's real source and target squares at the last point costs the move; their
    mirror images (where a mover-frame mix-up would put them) cost it far less."""
    items = [i for i in PUZZLES[net] if " b " in i["fen"]][:4]
    assert items

    def sets(item, clean, corrupted):
        move = chess.Move.from_uci(item["first"])
        real = [move.from_square, move.to_square]
        return [real, [chess.square_mirror(s) for s in real]]

    for real, mirror in _last_point_drops(net, items, sets):
        assert real > 0.5 and real > mirror + 0.5, (real, mirror)


def test_lookahead_study_contract_determinism_and_resumption(tmp_path, capsys):
    csv = tmp_path / "p.csv"
    csv.write_text(CSV)
    argv = ["study", "lookahead", "--model", "maia-1900", "--sparring", "cf-small", "--csv", str(csv), "--json",
            "--threads", "1"]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    puzzles = printed["puzzles"]
    assert puzzles["eligible"] == 2 and puzzles["kept"] == 1
    assert set(puzzles["items"][0]) == {"id", "fen", "corrupted_fen", "first", "third"}
    assert puzzles["items"][0]["id"] == "FIZ4w" and puzzles["items"][0]["first"] == "e2f2"
    assert printed["points"] == ["embed", *[f"{i}.block" for i in range(6)]]
    assert set(printed["patching"]) == set(CURVES)
    for curve in printed["patching"].values():
        assert len(curve) == len(printed["points"]) and all(set(c) == {"mean", "se"} for c in curve)

    spec = StudySpec("lookahead", "maia-1900", PositionSource("csv", path=str(csv)), {"sparring": "cf-small"})
    stored = {}
    with pytest.raises(StudyStopped):
        run_study(spec, threads=1, on_item=stored.__setitem__, should_stop=lambda: len(stored) >= 1)
    resumed = run_study(spec, threads=1, done=stored)
    whole = {k: printed[k] for k in ("spec", "code_version", "items", "summary")}
    assert export.to_json(resumed) == export.to_json(whole)
