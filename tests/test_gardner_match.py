"""Matches on the 5x5 board: Gardner openings, a network against material-greedy, and the
agents that cannot play it refused with one message."""

from __future__ import annotations

import json

import chess
import pytest

from analysis.cli import main
from analysis.eval.agents import MaterialGreedyAgent, SearchAgent, StockfishAgent
from analysis.eval.match import check_plays, gardner_openings, play_match
from analysis.gardner import GardnerBoard, variant_board


@pytest.fixture(scope="module")
def gardner_net(tmp_path_factory):
    path = tmp_path_factory.mktemp("nets") / "gardner.safetensors"
    assert main(["init", "--family", "alphagateau", "--preset", "ag-small-gardner", "--out", str(path)]) == 0
    return path


def test_gardner_openings_are_every_legal_two_ply_line():
    openings = gardner_openings()
    assert len(openings) == 53  # perft(2) from the Gardner start
    assert len({tuple(o.moves) for o in openings}) == 53
    for opening in openings:
        board = GardnerBoard()
        for move in opening.moves:
            assert move in board.legal_moves
            board.push(move)


def test_a_network_plays_material_greedy_on_the_5x5_board(gardner_net, tmp_path):
    from analysis.checkpoint import load_evaluator

    net = SearchAgent(load_evaluator(gardner_net, device="cpu"), "policy")
    result = play_match(net, MaterialGreedyAgent(), gardner_openings(), 2, variant="gardner",
                        pgn_path=tmp_path / "games.pgn")
    assert result.wins + result.draws + result.losses == 2
    for game in result.games:
        board = game.end().board()
        assert isinstance(board, GardnerBoard) and board.is_game_over()
        assert "gardner" in game.headers["Event"]
    assert (tmp_path / "games.pgn").read_text().count("[Event ") == 2


def test_agents_that_read_another_board_are_refused(gardner_net, tiny_checkpoint):
    from analysis.checkpoint import load_evaluator

    with pytest.raises(ValueError, match="cannot play chess"):
        check_plays(SearchAgent(load_evaluator(gardner_net, device="cpu"), "policy"), "chess")
    with pytest.raises(ValueError, match="cannot play gardner"):
        check_plays(SearchAgent(load_evaluator(tiny_checkpoint, device="cpu"), "policy"), "gardner")
    stockfish = StockfishAgent.__new__(StockfishAgent)  # the check needs no engine process
    stockfish.name = "stockfish"
    with pytest.raises(ValueError, match="8x8 chess only"):
        check_plays(stockfish, "gardner")
    check_plays(MaterialGreedyAgent(), "gardner")  # it plays any board's legal moves


def test_cli_gardner_match(gardner_net, capsys):
    assert main(["match", "--variant", "gardner", "--a", f"{gardner_net}:policy", "--b", "material-greedy",
                 "--games", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["games"] == 2 and out["b"] == "material-greedy"


@pytest.mark.parametrize("args, reason", [
    (["--variant", "gardner", "--openings", "x"], "--openings is for 8x8 chess"),
    ([], "--openings DIR"),
    (["--variant", "gardner", "--b", "stockfish"], "8x8 chess only"),
])
def test_cli_match_bad_variant_input_is_one_clear_error(gardner_net, capsys, args, reason):
    argv = ["match", "--a", f"{gardner_net}:policy", "--b", "material-greedy", "--games", "2", *args]
    assert main(argv) != 0
    assert reason in capsys.readouterr().err


def test_variant_board_refuses_an_unknown_variant():
    assert variant_board("chess") == chess.Board()
    with pytest.raises(ValueError, match="unknown variant"):
        variant_board("crazyhouse")
