"""The look-ahead lab's bilinear probe (issue 38): it learns a planted rule, it is at chance on
shuffled labels, a seed fixes its result; and the ``probe`` study method on small nets."""

from __future__ import annotations

import pytest
import torch

from analysis.studies.bilinear_probe import MoveProbeData, ProbeConfig, probe_whole_move


def planted(n: int, channels: int = 16, strength: float = 2.0, seed: int = 0) -> MoveProbeData:
    """Random square vectors with a planted line: the 3rd target's vector carries a fixed rotation of
    the 1st target's, and the 3rd source's a rotation of the 3rd target's (a bilinear rule)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 64, channels, generator=g)
    turn_1 = torch.linalg.qr(torch.randn(channels, channels, generator=g))[0]
    turn_2 = torch.linalg.qr(torch.randn(channels, channels, generator=g))[0]
    squares = torch.stack([torch.randperm(64, generator=g)[:3] for _ in range(n)])
    first, target, source = squares.unbind(1)
    rows = torch.arange(n)
    x[rows, target] += strength * x[rows, first] @ turn_1.T
    x[rows, source] += strength * x[rows, target] @ turn_2.T
    return MoveProbeData(x, first, source, target)


def test_probe_learns_a_planted_line():
    result = probe_whole_move(planted(1000), ProbeConfig(), seed=0)
    assert result.mean > 0.9
    assert result.low <= result.mean <= result.high
    assert len(result.per_seed) == 5 and (result.train, result.test) == (700, 300)


def test_probe_is_at_chance_on_shuffled_labels():
    data = planted(1000)
    shuffle = torch.randperm(len(data), generator=torch.Generator().manual_seed(1))
    control = MoveProbeData(data.x, data.first_target, data.third_source[shuffle], data.third_target[shuffle])
    assert probe_whole_move(control, ProbeConfig(), seed=0).mean < 0.1


def test_probe_is_deterministic_under_its_seed():
    data = planted(300, seed=3)
    config = ProbeConfig(seeds=2)
    assert probe_whole_move(data, config, seed=7) == probe_whole_move(data, config, seed=7)


def test_probe_rejects_bad_inputs():
    with pytest.raises(ValueError, match="train_share"):
        ProbeConfig(train_share=1.0)
    with pytest.raises(ValueError, match="one position to train on"):
        probe_whole_move(planted(1), ProbeConfig(seeds=1))
    with pytest.raises(ValueError, match=r"\(N, 64, C\)"):
        MoveProbeData(torch.zeros(2, 32, 4), *(torch.zeros(2, dtype=torch.long),) * 3)


# -- the master-game miner and the ``probe`` study method

import json  # noqa: E402

import chess  # noqa: E402

from analysis.checkpoint import load_evaluator  # noqa: E402
from analysis.cli import main  # noqa: E402
from analysis.studies import PositionSource, StudyInputError, StudySpec, read_positions, run_study  # noqa: E402
from analysis.studies.methods.probe import untrained_copy  # noqa: E402
from analysis.studies.mining import MiningConfig, game_positions, master_pgns, mine  # noqa: E402
from tests.conftest import ROOT, require_shared_data  # noqa: E402

OPERA = """[Event "Opera game"]
[White "Morphy"]
[Black "Duke Karl / Count Isouard"]
[Result "1-0"]

1. e4 e5 2. Nf3 d6 3. d4 Bg4 4. dxe5 Bxf3 5. Qxf3 dxe5 6. Bc4 Nf6 7. Qb3 Qe7 8. Nc3 c6 9. Bg5 b5
10. Nxb5 cxb5 11. Bxb5+ Nbd7 12. O-O-O Rd8 13. Rxd7 Rxd7 14. Rd1 Qe6 15. Bxd7+ Nxd7 16. Qb8+ Nxb8
17. Rd8# 1-0
"""


def _top_line(evaluator, fen: str, plies: int) -> list[tuple[str, float]]:
    board, out = chess.Board(fen), []
    for _ in range(plies):
        evaluation = evaluator.evaluate([chess.Board(board.fen())])[0]
        move = evaluation.best_move()
        out.append((move.uci(), evaluation.policy[move]))
        board.push(move)
    return out


def test_mined_lines_are_the_networks_own_top_moves(tiny_checkpoint, tmp_path):
    path = tmp_path / "opera.pgn"
    path.write_text(OPERA + "\n" + OPERA.replace("Opera game", "again"))
    positions = list(game_positions([path], skip=4))
    assert positions[0][0] == "opera:0:4" and len(positions) == 29  # the second game repeats every position
    evaluator = load_evaluator(tiny_checkpoint, device="cpu")
    mined = mine(evaluator, positions, MiningConfig(threshold=0.0, limit=5, batch=3))
    assert [m.id for m in mined] == [p[0] for p in positions[:5]]
    for m in mined:
        line = _top_line(evaluator, m.fen, 3)
        assert m.moves == tuple(u for u, _ in line)
        assert m.probs == pytest.approx([p for _, p in line])
    strict = mine(evaluator, positions, MiningConfig(threshold=0.5, limit=5))
    assert all(min(m.probs) > 0.5 for m in strict)


def test_mining_on_maia_finds_confident_lines():
    require_shared_data("pgn")
    evaluator = load_evaluator(ROOT / "weights" / "maia-1900.safetensors", device="cpu")
    positions = game_positions(master_pgns()[:1])
    mined = mine(evaluator, positions, MiningConfig(limit=6))
    assert len(mined) == 6 and len({m.fen for m in mined}) == 6
    for m in mined[:3]:
        line = _top_line(evaluator, m.fen, 3)
        assert m.moves == tuple(u for u, _ in line) and min(p for _, p in line) > 0.5


def test_the_untrained_copy_is_seeded_and_not_the_network(tiny_checkpoint):
    model = load_evaluator(tiny_checkpoint, device="cpu").model
    a, b, c = untrained_copy(model, 5), untrained_copy(model, 5), untrained_copy(model, 6)
    pairs = list(zip(a.state_dict().values(), b.state_dict().values(), c.state_dict().values(),
                     model.state_dict().values()))
    assert all(torch.equal(x, y) for x, y, _, _ in pairs)
    assert any(not torch.equal(x, z) for x, _, z, _ in pairs) and any(not torch.equal(x, m) for x, _, _, m in pairs)


def _probe_spec(checkpoint, seed=0, **settings) -> StudySpec:
    base = {"rule": "line", "mined": 0, "seeds": 2, "epochs": 2}
    return StudySpec("probe", str(checkpoint), PositionSource("pgn", text=OPERA), {**base, **settings}, seed)


def test_probe_method_on_a_tiny_net_is_deterministic(tiny_checkpoint):
    first = run_study(_probe_spec(tiny_checkpoint), threads=1)
    summary = first["summary"]
    points = summary["points"]
    assert summary["probe_positions"]["positions"] >= 20 and summary["probe_note"] is None
    for kind in ("trained", "untrained"):
        assert len(summary["probe"][kind]) == len(points)
        assert all(0.0 <= a <= 1.0 for a in summary["probe"][kind])
    cells = summary["probe_cells"]["trained"]
    assert all(c["low"] <= c["score"] <= c["high"] and len(c["per_seed"]) == 2 for c in cells)
    assert json.dumps(run_study(_probe_spec(tiny_checkpoint), threads=1)) == json.dumps(first)


def test_probe_positions_skip_a_reused_target_and_too_few_train_nothing(tiny_checkpoint):
    source = PositionSource("pgn", text=OPERA, limit=19)
    result = run_study(StudySpec("probe", str(tiny_checkpoint), source, {"rule": "line", "mined": 0}, 0), threads=1)
    for item, r in zip(read_positions(source), result["items"]):
        reused = chess.Move.from_uci(item.moves[0]).to_square == chess.Move.from_uci(item.moves[2]).to_square
        assert r["kept"] is not reused and (r.get("reason") == "1st target reused as 3rd") is reused
    assert [r["index"] for r in result["items"] if not r["kept"]] == [17, 18]  # 9... b5 10. Nxb5 cxb5 11. Bxb5+
    assert result["summary"]["probe"]["trained"] == [None] * len(result["summary"]["points"])
    assert "only" in result["summary"]["probe_note"]


@pytest.mark.parametrize("settings, message", [({"rule": "kept"}, "sparring"), ({"rule": "any"}, "rule must be"),
                                               ({"mined": -1}, "mined"), ({"train_share": 1.5}, "train_share")])
def test_bad_probe_settings_are_one_line(tiny_checkpoint, settings, message):
    with pytest.raises(StudyInputError, match=message):
        run_study(StudySpec("probe", str(tiny_checkpoint), PositionSource("pgn", text=OPERA), settings, 0))


def test_the_study_command_runs_the_probe(tiny_checkpoint, tmp_path, capsys):
    path = tmp_path / "opera.pgn"
    path.write_text(OPERA)
    code = main(["study", "probe", "--model", str(tiny_checkpoint), "--pgn", str(path), "--set", "rule=line",
                 "--set", "mined=0", "--set", "seeds=1", "--set", "epochs=1", "--threads", "1", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and set(out["probe"]) == {"trained", "untrained"} and len(out["probe"]["trained"]) == len(out["points"])


def test_the_lookahead_command_with_method_probe_adds_probe(tiny_checkpoint, tmp_path, capsys):
    csv = tmp_path / "p.csv"
    csv.write_text("PuzzleId,FEN,Moves,Rating,Themes\n"
                   "tewjc,r5k1/pp3p1p/2b2qp1/3pr3/8/4P2P/R1PN1PP1/Q3K2R w K - 0 19,a2a7 e5e3 f2e3 f6a1 a7a1 a8a1,1493,long\n")
    code = main(["study", "lookahead", "--model", str(tiny_checkpoint), "--sparring", str(tiny_checkpoint),
                 "--csv", str(csv), "--method", "probe", "--set", "mined=0", "--threads", "1", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and {"puzzles", "points", "patching", "probe"} <= set(out)
    assert out["studies"]["probe"]["summary"]["probe_positions"]["puzzle_rule"] == "kept (the look-ahead set)"
    assert len(out["probe"]["trained"]) == len(out["points"])
