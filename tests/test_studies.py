"""The study framework (analysis.studies): position sets and their errors, settings, determinism,
resumption after a stop, exports, and the ``study`` command's errors."""

from __future__ import annotations

import json

import chess
import pytest

from analysis.cli import main
from analysis.studies import (PositionSource, StudyInputError, StudySpec, StudyStopped, code_version,
                              read_positions, run_study)
from analysis.studies import export, methods
from analysis.studies.spec import parse_settings
from tests.conftest import require_shared_data, require_stockfish

CSV = """PuzzleId,FEN,Moves,Rating,Themes
tewjc,r5k1/pp3p1p/2b2qp1/3pr3/8/4P2P/R1PN1PP1/Q3K2R w K - 0 19,a2a7 e5e3 f2e3 f6a1 a7a1 a8a1,1493,crushing long
0kDWS,1r6/1PN5/3p4/4kpp1/1R6/P3n3/K1P5/8 b - - 0 49,e3d5 b4b5 b8b7 b5b7,1947,advantage short
"""
PGN = """[Event "t"]
[White "A"]
[Black "B"]

1. e4 e5 2. Nf3 Nc6 *
"""
FENS = "# two positions\nr1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3\n\n8/8/8/8/8/5k2/8/5K2 b - - 0 1\n"


def test_csv_items_start_after_the_setup_move():
    items = read_positions(PositionSource("csv", text=CSV))
    assert [i.index for i in items] == [0, 1] and items[0].id == "tewjc"
    board = chess.Board("r5k1/pp3p1p/2b2qp1/3pr3/8/4P2P/R1PN1PP1/Q3K2R w K - 0 19")
    board.push_uci("a2a7")
    assert items[0].fen == board.fen() and items[0].moves == ("e5e3", "f2e3", "f6a1", "a7a1", "a8a1")
    assert items[0].meta["rating"] == 1493 and items[0].meta["themes"] == ["crushing", "long"]
    assert len(read_positions(PositionSource("csv", text=CSV, limit=1))) == 1


def test_csv_from_a_path(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text(CSV)
    assert [i.id for i in read_positions(PositionSource("csv", path=str(path)))] == ["tewjc", "0kDWS"]


def test_pgn_gives_every_position_with_the_next_moves():
    items = read_positions(PositionSource("pgn", text=PGN))
    assert len(items) == 4 and items[0].fen == chess.STARTING_FEN
    assert items[1].moves == ("e7e5", "g1f3", "b8c6") and items[1].meta["ply"] == 1


def test_fens_skip_blanks_and_comments():
    items = read_positions(PositionSource("fens", text=FENS))
    assert [i.meta["line"] for i in items] == [2, 4] and items[1].fen.startswith("8/8/8/8/8/5k2")


def test_shipped_puzzle_set_by_name():
    require_shared_data("puzzles/lichess_puzzles_1000.csv")
    items = read_positions(PositionSource("puzzles", path="lichess_puzzles_1000", limit=3))
    assert [i.id for i in items] == ["tewjc", "0kDWS", "f2p5F"]


@pytest.mark.parametrize("source, words", [
    (PositionSource("fens", text="\n# nothing\n"), "empty"),
    (PositionSource("fens", text=FENS + "not a fen\n"), "line 5"),
    (PositionSource("puzzles", path="no_such_set"), "unknown puzzle set"),
    (PositionSource("csv", text="PuzzleId,FEN\nx,8/8/8/8/8/8/8/8 w - - 0 1\n"), "column(s) Moves"),
    (PositionSource("csv", text=CSV.replace("a2a7 e5e3", "a2a8 e5e3")), "line 2"),
    (PositionSource("pgn", text="1. e4 e5 2. Ke3 *"), "game 1"),
    (PositionSource("shapes", text="x"), "unknown position kind"),
    (PositionSource("fens", text=FENS, limit=0), "limit"),
    (PositionSource("fens"), "needs a path or a text"),
    (PositionSource("csv", path="/no/such/file.csv"), "cannot read"),
    (PositionSource("games"), "network"),
])
def test_bad_position_sets_say_why_in_one_line(source, words):
    with pytest.raises(StudyInputError) as caught:
        read_positions(source)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_settings_are_typed_and_unknown_keys_refused():
    kind = methods.get("forgotten").settings
    assert parse_settings(kind, {"nodes": 5000, "margin": 0}, "forgotten").margin == 0.0
    with pytest.raises(StudyInputError, match="no setting 'depth'"):
        parse_settings(kind, {"depth": 3}, "forgotten")
    with pytest.raises(StudyInputError, match="must be int"):
        parse_settings(kind, {"nodes": "many"}, "forgotten")
    with pytest.raises(StudyInputError, match="unknown study method"):
        methods.get("astrology")


def test_code_version_is_stable():
    assert code_version() == code_version() and code_version()


def _spec(checkpoint, seed=0) -> StudySpec:
    return StudySpec("forgotten", str(checkpoint), PositionSource("csv", text=CSV + CSV.split("\n", 1)[1]),
                     {"nodes": 2000}, seed)


def test_forgotten_is_deterministic_and_resumes(tiny_checkpoint):
    require_stockfish()
    whole = run_study(_spec(tiny_checkpoint), threads=1)
    again = run_study(_spec(tiny_checkpoint), threads=1)
    assert export.to_json(whole) == export.to_json(again)
    assert [r["index"] for r in whole["items"]] == [0, 1, 2, 3]
    stored, calls = {}, []
    with pytest.raises(StudyStopped):
        run_study(_spec(tiny_checkpoint), threads=1, on_item=stored.__setitem__,
                  should_stop=lambda: len(stored) >= 2, on_progress=lambda k, n: calls.append((k, n)))
    assert sorted(stored) == [0, 1] and calls[-1] == (2, 4)
    resumed = run_study(_spec(tiny_checkpoint), threads=1, done=json.loads(json.dumps(stored)))  # keys as text
    assert export.to_json(resumed) == export.to_json(whole)
    summary = whole["summary"]
    assert summary["table"][0]["share"]["n"] == 4
    assert len(summary["figures"][0]["x"]) == len(whole["items"][0]["tops"])


def test_exports(tiny_checkpoint):
    require_stockfish()
    result = run_study(_spec(tiny_checkpoint), threads=1)
    assert json.loads(export.to_json(result))["items"] == result["items"]
    rows = export.to_csv(result).splitlines()
    assert len(rows) == 1 + len(result["items"]) and rows[0].startswith("index,id,fen,kept")
    assert export.figure_png(result, "forgotten_points")[:8] == b"\x89PNG\r\n\x1a\n"
    svg = export.figure_svg(result, "forgotten_points")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert export.figure_svg(result, "forgotten_points") == svg
    with pytest.raises(KeyError, match="forgotten_points"):
        export.figure_png(result, "nothing")


@pytest.mark.parametrize("argv, words", [
    (["study", "forgotten", "--model", "no-such-net", "--limit", "2"], "no network"),
    (["study", "astrology", "--model", "maia-1900"], "unknown study method"),
    (["study", "forgotten", "--model", "maia-1900", "--set", "depth=3"], "no setting 'depth'"),
    (["study", "forgotten", "--model", "maia-1900", "--set", "nodes"], "KEY=VALUE"),
])
def test_study_command_errors_exit_2(capsys, argv, words):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1
