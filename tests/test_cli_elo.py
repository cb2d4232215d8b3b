"""``python -m analysis elo``: match JSONs in, one anchored rating list out."""

from __future__ import annotations

import json

import pytest

from analysis.cli import main
from analysis.eval.elo import PairResult, fit_elo


def _match(tmp_path, name, a, b, w, d, l):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"a": a, "b": b, "wins": w, "draws": d, "losses": l, "games": w + d + l}))
    return str(path)


def test_three_players_fit_as_the_library_does(tmp_path, capsys):
    files = [_match(tmp_path, "1", "net-a", "sf", 6, 7, 27), _match(tmp_path, "2", "net-b", "sf", 8, 8, 24),
             _match(tmp_path, "3", "net-a", "net-b", 40, 20, 40)]
    assert main(["elo", *files, "--anchor", "sf=1350", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    fit = fit_elo([PairResult("net-a", "sf", 6, 7, 27), PairResult("net-b", "sf", 8, 8, 24),
                   PairResult("net-a", "net-b", 40, 20, 40)], anchor="sf", anchor_rating=1350)
    got = {row["player"]: row for row in out["ratings"]}
    assert got["sf"]["rating"] == 1350 and got["sf"]["ci95"] == [1350, 1350]
    for player in ("net-a", "net-b"):
        assert got[player]["rating"] == pytest.approx(fit.ratings[player], abs=0.05)
        assert got[player]["rating"] < 1350  # both lost most of their games to sf
    assert [row["player"] for row in out["ratings"]][0] == "sf"


@pytest.mark.parametrize("content, args, message", [
    ("{not json", [], "is not a `match --json` result"),
    (json.dumps({"a": "x", "b": "y", "wins": 1, "draws": 0, "losses": 0}), ["--anchor", "z=1"], "anchor 'z' played no games"),
    (json.dumps({"a": "x", "b": "y", "wins": 1, "draws": 0, "losses": 0}), ["--anchor", "y"], "--anchor takes NAME=RATING"),
])
def test_bad_input_is_one_line(tmp_path, capsys, content, args, message):
    path = tmp_path / "m.json"
    path.write_text(content)
    assert main(["elo", str(path), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
