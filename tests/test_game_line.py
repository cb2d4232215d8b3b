"""Game-line figures (zig-zag, mover error, parent-child marks) on lines whose answers are known."""

from __future__ import annotations

import json

import pytest

from analysis.eval.game_line import main, mover_error, parent_child_marks, zigzag

WHITE_FIRST = [True, False] * 5  # the start position, then alternating


def biased(true: list[float], b: float) -> list[float]:
    """``true`` (White's view) with ``b`` added to the side to move's score."""
    return [t + b if w else t - b for t, w in zip(true, WHITE_FIRST)]


def test_a_mover_bias_on_a_steady_game_is_twice_the_bias_in_zigzag():
    steady = [0.5] * 10
    assert zigzag(steady, WHITE_FIRST) == pytest.approx(0.0)
    assert zigzag(biased(steady, 0.1), WHITE_FIRST) == pytest.approx(0.2)
    assert mover_error(biased(steady, 0.1), steady, WHITE_FIRST) == pytest.approx(0.1)


def test_a_smooth_trend_has_no_zigzag():
    rising = [0.3 + 0.04 * i for i in range(10)]
    assert zigzag(rising, WHITE_FIRST) == pytest.approx(0.0, abs=1e-12)
    assert mover_error(rising, rising, WHITE_FIRST) == pytest.approx(0.0)


def test_parent_child_marks_every_move_of_a_biased_line_and_none_of_a_steady_one():
    steady = [0.5] * 10
    assert parent_child_marks(steady, WHITE_FIRST) == {None: 9}
    assert parent_child_marks(biased(steady, 0.08), WHITE_FIRST) == {"??": 9}  # 0.16 drop every ply
    assert parent_child_marks(biased(steady, 0.03), WHITE_FIRST) == {"?!": 9}  # 0.06


def test_zigzag_needs_three_plies():
    with pytest.raises(ValueError):
        zigzag([0.5, 0.5], [True, False])


def test_command_reads_analyze_pgn_lines(tmp_path, capsys):
    scores = biased([0.5] * 4, 0.1)
    lines = [{"main": True, "ply": i, "fen": f"4k3/8/8/8/8/8/4P3/4K3 {'w' if i % 2 == 0 else 'b'} - - 0 1",
              "network_score": s, "judgement": None if i == 0 else {"glyph": "?!"}} for i, s in enumerate(scores)]
    lines.append({"main": True, "ply": 4, "fen": "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "network_score": 0.9,
                  "judgement": {"glyph": "??"}})  # stalemate: the page shows the rules' result, left out
    lines.append({"main": False, "ply": 1, "fen": "x", "network_score": 0.0, "judgement": None})  # a variation
    path = tmp_path / "lines.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in reversed(lines)))
    assert main([str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["moves"] == 3 and out["zigzag"] == pytest.approx(0.2)
    assert out["same_parent_marks"] == {"?!": 3} and out["parent_child_marks"] == {"??": 3}


def test_command_bad_file_exits_2(tmp_path, capsys):
    assert main([str(tmp_path / "missing.jsonl")]) == 2
    assert capsys.readouterr().err.startswith("error: ")
