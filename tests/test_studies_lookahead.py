"""The look-ahead puzzle set and its corruptions (analysis.studies.lookahead_set, corruptions): every
kept corruption is a legal one-edit board with the 1st move legal and meets the documented rules,
checked again from the networks' own outputs; the structural filters; the method's errors."""

from __future__ import annotations

import chess
import pytest
import torch

from analysis.checkpoint import load_evaluator, save_checkpoint
from analysis.studies import Item, PositionSource, StudyInputError, StudySpec, run_study
from analysis.studies.corruptions import changed_squares, corruptions
from analysis.studies.lookahead_set import PuzzleRules, choose_corruption, jsd, log_odds, mover_value, structural

# Ng6 hxg6 Rh4#: the paper's running example (White to move), and a Black-to-move puzzle.
WHITE = "2r2r1k/6pp/p1q2p2/1p6/3R1N2/PQ2P2P/1P3PP1/6K1 w - - 5 32"
BLACK = "6k1/1p1n1ppp/2p2p2/5b2/P1PP4/2B1bN2/BP2r1PP/4RK2 b - - 3 22"


@pytest.fixture(scope="module")
def two_nets(tmp_path_factory, tiny_checkpoint):
    """Two untrained cf-tiny nets (seeds 0 and 1): the studied one and a sparring one."""
    from analysis.models.chessformer import PRESETS, Chessformer

    torch.manual_seed(1)
    path = tmp_path_factory.mktemp("spar") / "cf-tiny-1.safetensors"
    save_checkpoint(path, Chessformer(PRESETS["cf-tiny"]), trained=False, provenance={"source": "tests: seed 1"})
    return load_evaluator(tiny_checkpoint, device="cpu"), load_evaluator(path, device="cpu")


@pytest.mark.parametrize("fen, first", [(WHITE, "f4g6"), (BLACK, "e2f2")])
def test_every_corruption_is_one_legal_edit_keeping_the_first_move(fen, first):
    board, move = chess.Board(fen), chess.Move.from_uci(first)
    found = corruptions(board, move)
    assert len(found) > 100 and len({c.fen for c in found}) == len(found)
    kinds = {c.edit.split()[0] for c in found}
    assert kinds == {"add", "remove", "move"}
    for c in found:
        edited = chess.Board(c.fen)
        assert edited.is_valid() and edited.is_legal(move)
        assert edited.turn == board.turn and edited.castling_rights == board.castling_rights
        assert edited.ep_square == board.ep_square
        assert c.squares == changed_squares(board, edited) and len(c.squares) in (1, 2)
        for square in c.squares:
            assert chess.square_rank(square) not in (0, 7) or c.edit.startswith("move")
        pieces = [p for p in (board.piece_at(s) for s in c.squares) if p] + \
                 [p for p in (edited.piece_at(s) for s in c.squares) if p]
        assert all(p.piece_type != chess.KING for p in pieces)
        if not c.edit.startswith("move"):
            assert all(p.piece_type == chess.PAWN for p in pieces)


def test_the_kept_corruption_meets_every_rule(two_nets):
    """On untrained nets with loose thresholds (so that some candidate passes), the chosen board
    passes each rule when measured again, and is the least divergent of those that pass."""
    studied, sparring = two_nets
    board, first = chess.Board(WHITE), chess.Move.from_uci("f4g6")
    rules = PuzzleRules(sparring_log_odds_drop=10.0, value_drop=-2.0, old_top_prob=1.0, max_jsd=1.0)
    spar_clean = sparring.evaluate([board])[0]
    chosen = choose_corruption(board, first, studied, sparring, spar_clean, rules)
    assert "corrupted_fen" in chosen, chosen
    corrupted = chess.Board(chosen["corrupted_fen"])
    assert corrupted.is_valid() and corrupted.is_legal(first)
    stud_clean, stud_dirty = studied.evaluate([board, corrupted])
    spar_dirty = sparring.evaluate([corrupted])[0]
    assert log_odds(spar_clean.policy[first]) - log_odds(spar_dirty.policy[first]) < rules.sparring_log_odds_drop
    assert mover_value(stud_clean) - mover_value(stud_dirty) > rules.value_drop
    assert abs(chosen["jsd"] - jsd(spar_clean.policy, spar_dirty.policy)) < 1e-5
    every = [jsd(spar_clean.policy, ev.policy) for ev in sparring.evaluate([chess.Board(c.fen) for c in
                                                                            corruptions(board, first)])]
    assert chosen["jsd"] <= min(every) + 1e-6
    strict = choose_corruption(board, first, studied, sparring, spar_clean, PuzzleRules(max_jsd=0.0))
    assert strict["reason"] in ("no corruption", "corruption too disruptive")


def test_structural_filters():
    assert structural(Item(0, "a", WHITE, ("f4g6", "h7g6", "d4h4"))) is None
    assert structural(Item(0, "a", WHITE, ("d4h4",), {"themes": ["mateIn1"]})) == "mate in 1"
    assert structural(Item(0, "a", WHITE, ("f4g6", "h7g6"))) == "short line"
    assert structural(Item(0, "a", WHITE, ("d4d7", "c6d7", "b3d5"))) is None
    assert structural(Item(0, "a", WHITE, ("d4d5", "c6d5", "b3d5"))) == "1st target reused as 3rd"
    mate = "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"
    assert structural(Item(0, "a", mate, ("d1d8", "g8h7", "d8d7"))) == "mate in 1"


def test_lookahead_needs_a_sparring_net(tiny_checkpoint):
    spec = StudySpec("lookahead", str(tiny_checkpoint), PositionSource("fens", text=WHITE))
    with pytest.raises(StudyInputError, match="sparring"):
        run_study(spec, threads=1)
