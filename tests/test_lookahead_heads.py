"""The look-ahead lab's head experiments (issue 38, ``heads`` study method): each batched effect equals
the same patch run alone, a clean source changes nothing, the piece groups come from the atlas labels
(cf-shaw: as its model card lists them), and a family without heads says why."""

from __future__ import annotations

import json

import chess
import pytest
import torch

from analysis.checkpoint import load_evaluator
from analysis.heads.atlas import AtlasConfig, compute_atlas
from analysis.lens import lens_for
from analysis.lens.patching import log_odds
from analysis.models.lens import AttentionZero, HeadPatch
from analysis.studies import PositionSource, StudyInputError, StudySpec, run_study
from analysis.studies.methods import get
from analysis.studies.methods.heads import _label_counts, head_effects, piece_groups, zero_entries
from tests.conftest import ROOT

# Ng6 hxg6 Rh4#: the paper's running example; the corruption removes Black's a6 pawn.
FEN = "2r2r1k/6pp/p1q2p2/1p6/3R1N2/PQ2P2P/1P3PP1/6K1 w - - 5 32"
CORRUPTED = "2r2r1k/6pp/5p2/1p6/3R1N2/PQ2P2P/1P3PP1/6K1 w - - 5 32"
LINE = ("f4g6", "h7g6", "d4h4")
# A Black-to-move line (real squares, never mirrored) and its corruption (White's a4 pawn removed).
BLACK = "6k1/1p1n1ppp/2p2p2/5b2/P1PP4/2B1bN2/BP2r1PP/4RK2 b - - 3 22"
BLACK_CORRUPTED = "6k1/1p1n1ppp/2p2p2/5b2/2PP4/2B1bN2/BP2r1PP/4RK2 b - - 3 22"
BLACK_LINE = ("e2f2", "f1g1", "f2b2")


@pytest.fixture(scope="module")
def tiny(tiny_checkpoint):
    evaluator = load_evaluator(tiny_checkpoint, device="cpu")
    return lens_for(evaluator.model, evaluator.encoding)


def _alone(adapter, fen: str, top: int, patch) -> float:
    clean = adapter.prepare(chess.Board(fen))
    with torch.no_grad():
        _, out = adapter.run(clean)
        _, patched = adapter.run(clean, patches=[patch])
    return float(log_odds(out.logits, top)[0] - log_odds(patched.logits, top)[0])


def _labels(adapter) -> list[list[str]]:
    """Hand-set labels: L0 H1 rook-moves, L1 H0 knight-moves, L1 H2 bishop-moves, the rest unlabelled."""
    units = adapter.units["head"]
    labels = [["unlabelled"] * units.per_layer for _ in range(units.layers)]
    labels[0][1], labels[1][0], labels[1][2] = "rook-moves", "knight-moves", "bishop-moves"
    return labels


@pytest.mark.parametrize("fen, corrupted, line", [(FEN, CORRUPTED, LINE), (BLACK, BLACK_CORRUPTED, BLACK_LINE)])
def test_each_batched_effect_is_the_patch_run_alone(tiny, fen, corrupted, line):
    effects = head_effects(tiny, fen, corrupted, line, _labels(tiny), chess.A1)
    clean = tiny.prepare(chess.Board(fen))
    top = [m.uci() for m in clean.moves].index(effects["top"])
    dirty = tiny.prepare(chess.Board(corrupted))
    q, k = chess.Move.from_uci(line[0]).to_square, chess.Move.from_uci(line[2]).to_square
    units = tiny.units["head"]
    for layer in range(units.layers):
        for head in range(units.per_layer):
            chosen = torch.zeros(1, units.per_layer, dtype=torch.bool)
            chosen[0, head] = True
            alone = _alone(tiny, fen, top, HeadPatch(layer, tiny.capture_heads(dirty, layer), chosen))
            assert effects["head_patch"][layer][head] == pytest.approx(alone, abs=2e-5)
            single = zero_entries(1, {0: [(q, k)]}, {})
            assert effects["single_entry"][layer][head] == pytest.approx(
                _alone(tiny, fen, top, AttentionZero(layer, head, single)), abs=2e-5)
            assert effects["other_entries"][layer][head] == pytest.approx(
                _alone(tiny, fen, top, AttentionZero(layer, head, ~single)), abs=2e-5)
    third = chess.Move.from_uci(line[2])
    assert effects["piece"] == "rook-moves" and effects["piece_heads"]["main"] == ["L0 H1"]
    main = _alone(tiny, fen, top, AttentionZero(0, 1, zero_entries(1, {}, {0: (third.to_square, third.from_square)})))
    assert effects["piece_drops"]["main"] == pytest.approx(main, abs=2e-5)
    assert effects["random_square"] == "a1"


def test_a_clean_source_changes_nothing(tiny):
    effects = head_effects(tiny, FEN, FEN, LINE, None, chess.A1)
    assert all(d == 0.0 for row in effects["head_patch"] for d in row)
    assert effects["piece_drops"] == {"main": None, "other": None, "random": None}


def test_zero_entries_protects_one_entry_of_the_column():
    entries = zero_entries(2, {0: [(3, 4)]}, {1: (20, 7)})
    assert entries[0].sum() == 1 and entries[0, 3, 4]
    assert entries[1, :, 20].sum() == 63 and not entries[1, 7, 20] and entries[1].sum() == 63


def test_piece_groups_follow_the_labels(tiny):
    main, other = piece_groups(_labels(tiny), "knight-moves")
    assert main == [(1, 0)] and other == [(0, 1), (1, 2)]


def test_cf_shaw_piece_heads_come_from_its_atlas_as_its_card_lists_them():
    evaluator = load_evaluator(ROOT / "weights" / "cf-shaw.safetensors", device="cpu")
    counts = _label_counts(compute_atlas(evaluator, AtlasConfig(positions=256)).labels)
    # weights/cf-shaw.md: pawn L1 H6, L3 H4; bishop L2 H0, L5 H2; king L5 H4; knight L5 H6; no rook head.
    assert counts["knight-moves"] == ["L5 H6"] and counts["bishop-moves"] == ["L2 H0", "L5 H2"]
    assert counts["pawn-moves"] == ["L1 H6", "L3 H4"] and counts["king-moves"] == ["L5 H4"]
    assert counts["rook-moves"] == []


def test_a_net_without_heads_says_why():
    evaluator = load_evaluator(ROOT / "weights" / "maia-1900.safetensors", device="cpu")
    reason = get("heads").why_not(lens_for(evaluator.model, evaluator.encoding))
    assert reason and "head" in reason
    with pytest.raises(StudyInputError, match="does not apply"):
        run_study(StudySpec("heads", "maia-1900", PositionSource("fens", text=FEN), {"sparring": "maia-1100"}, 0))


def test_the_heads_method_needs_a_sparring_net(tiny_checkpoint):
    with pytest.raises(StudyInputError, match="sparring"):
        run_study(StudySpec("heads", str(tiny_checkpoint), PositionSource("fens", text=FEN), {}, 0))


PUZZLE = ("PuzzleId,FEN,Moves,Rating,Themes\n"  # lichess_puzzles_1000.csv: kept for cf-shaw with maia-1100 sparring
          "3AZG3,r5k1/2r2b2/3R1Pp1/p3p3/R1P1P1B1/8/7P/6K1 b - - 1 30,f7c4 a4c4 c7c4 g4e6 g8h8 e6c4,1760,"
          "attraction crushing endgame exposedKing fork long sacrifice\n")


def test_the_heads_study_on_cf_shaw_is_deterministic_and_resumes_the_same():
    spec = StudySpec("heads", "cf-shaw", PositionSource("csv", text=PUZZLE),
                     {"sparring": "maia-1100", "atlas_positions": 64}, 3)
    first = run_study(spec, threads=1)
    item = first["items"][0]
    assert item["kept"] and item["analysed"] and item["piece"] == "bishop-moves"
    assert first["summary"]["heads"]["piece_heads"] == {"bishop-moves": item["piece_heads"]["main"]}
    assert len(first["summary"]["heads"]["top"]) == 3
    assert json.dumps(run_study(spec, threads=1)) == json.dumps(first)
    assert json.dumps(run_study(spec, done={0: item}, threads=1)) == json.dumps(first)
