"""The three ChessBench agents through the search registry, their repetition handling, and every
CLI command (search, puzzles, sts, metrics, match, uci) on tiny untrained ChessBench checkpoints."""

import io
import json
import sys

import chess
import pytest
import torch

from analysis.checkpoint import save_checkpoint
from analysis.cli import main
from analysis.models import get_family
from analysis.search import run_search
from analysis.eval.specs import resolve_evaluator
from tests.annotated_fixture import write_fixture_dataset

FAMILY = get_family("chessbench")
MATE_IN_ONE = "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("cb-nets")
    torch.manual_seed(0)
    paths = {}
    for head in ("action_value", "state_value", "behavioural_cloning"):
        model = FAMILY.build(FAMILY.preset("cb-tiny", head=head))
        paths[head] = save_checkpoint(root / f"{head}.safetensors", model, trained=False)
    return paths


def test_action_value_agent_takes_the_argmax_of_one_batch(checkpoints):
    evaluator = resolve_evaluator(str(checkpoints["action_value"]), device="cpu")
    board = chess.Board(MATE_IN_ONE)
    values = evaluator.evaluate_actions([board])[0]
    result = run_search("value", board, evaluator)
    assert result.extras == {"action_values": True}
    assert result.best_move == max(values, key=values.get)
    assert {r.move: r.score for r in result.root} == pytest.approx(values)


def test_state_value_agent_scores_successors(checkpoints):
    evaluator = resolve_evaluator(str(checkpoints["state_value"]), device="cpu")
    board = chess.Board(MATE_IN_ONE)
    result = run_search("value", board, evaluator)
    assert result.best_move == chess.Move.from_uci("d1d8")  # the mate is exact, whatever the net says
    others = [m for m in board.legal_moves if m.uci() != "d1d8"]
    successors = []
    for move in others:
        board.push(move)
        successors.append(board.copy())
        board.pop()
    opponent = [ev.score for ev in evaluator.evaluate(successors)]
    root = {r.move: r.score for r in result.root}
    assert [root[m] for m in others] == pytest.approx([1 - s for s in opponent], abs=1e-6)


def test_cloning_agent_plays_its_policy(checkpoints):
    evaluator = resolve_evaluator(str(checkpoints["behavioural_cloning"]), device="cpu")
    board = chess.Board()
    policy = evaluator.evaluate([board])[0].policy
    assert run_search("policy", board, evaluator).best_move == max(policy, key=policy.get)


def _shuffled_game() -> chess.Board:
    """White to move, with Nf3-g1 about to repeat the position for the third time."""
    board = chess.Board()
    for uci in ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6"]:
        board.push_uci(uci)
    return board


@pytest.mark.parametrize("head", ["action_value", "state_value"])
def test_a_move_that_allows_a_repetition_claim_is_a_draw(checkpoints, head):
    evaluator = resolve_evaluator(str(checkpoints[head]), device="cpu")
    board = _shuffled_game()
    root = {r.move: r.score for r in run_search("value", board, evaluator).root}
    assert root[chess.Move.from_uci("f3g1")] == 0.5  # g1 repeats the position a third time
    fresh = chess.Board(board.fen())  # the same FEN without history: the net's own value
    assert {r.move: r.score for r in run_search("value", fresh, evaluator).root}[chess.Move.from_uci("f3g1")] != 0.5


@pytest.fixture(scope="module")
def suites(tmp_path_factory):
    root = tmp_path_factory.mktemp("suites")
    (root / "puzzles.csv").write_text(
        "PuzzleId,FEN,Moves,Rating\n"
        "p1,6k1/5ppp/8/8/8/8/5PPP/3R2K1 b - - 0 1,g8h8 d1d8,900\n"
        "p2,r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR b KQkq - 3 3,g8e7 f3f7,1200\n")
    (root / "sts.epd").write_text(
        '6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - bm Rd8#; id "STS(v1.0) t.001"; c8 "10 3"; c9 "d1d8 g1f1";\n')
    openings = root / "openings"
    openings.mkdir()
    (openings / "a.tsv").write_text("eco\tname\tpgn\nC20\tKing's Pawn\t1. e4 e5\nD00\tQueen's Pawn\t1. d4 d5\n")
    write_fixture_dataset(root / "data", games=3, plies=10)
    return root


def _run(args, capsys) -> str:
    assert main(args) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def test_cli_commands_with_a_chessbench_checkpoint(checkpoints, suites, capsys):
    av = str(checkpoints["action_value"])
    out = json.loads(_run(["search", "--model", av, "--algo", "value", "--fen", MATE_IN_ONE, "--json"], capsys))
    assert chess.Move.from_uci(out["bestmove"]) in chess.Board(MATE_IN_ONE).legal_moves
    assert len(out["root"]) == len(list(chess.Board(MATE_IN_ONE).legal_moves))
    for algo in ("policy", "mcts", "gumbel", "alphabeta"):
        text = _run(["search", "--model", av, "--algo", algo, "--nodes", "16", "--fen", MATE_IN_ONE], capsys)
        assert text.splitlines()[1].startswith("bestmove ")
    report = json.loads(_run(["puzzles", "--model", av, "--algo", "value", "--csv",
                              str(suites / "puzzles.csv"), "--json"], capsys))
    assert report["total"] == 2
    sts = json.loads(_run(["sts", "--model", av, "--algo", "value", "--epd", str(suites / "sts.epd"), "--json"],
                          capsys))
    assert sts["maximum"] == 10
    for head, algo in (("action_value", "value"), ("state_value", "value"), ("behavioural_cloning", "policy")):
        metrics = json.loads(_run(["metrics", "--model", str(checkpoints[head]), "--algo", algo, "--data",
                                   str(suites / "data"), "--json"], capsys))
        assert metrics["positions"] > 0 and 0 <= metrics["action_accuracy"] <= 1
    match = json.loads(_run(["match", "--a", f"{av}:value", "--b", "material-greedy", "--games", "2",
                             "--openings", str(suites / "openings"), "--max-plies", "12", "--json"], capsys))
    assert match["wins"] + match["draws"] + match["losses"] == 2


def test_uci_with_a_chessbench_checkpoint(checkpoints, capsys, monkeypatch):
    commands = f"uci\nisready\nposition fen {MATE_IN_ONE}\ngo nodes 1\nisready\nquit\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(commands))
    assert main(["uci", "--model", str(checkpoints["action_value"]), "--algo", "value", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "uciok" in out and "bestmove " in out
