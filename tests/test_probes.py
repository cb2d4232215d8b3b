"""Concept probes (issue 39): the concepts on known positions, balanced sets, a random concept's
AUROC, erasure, and the CLI's JSON contract on a small untrained net over random-play positions."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import chess
import numpy as np
import pytest

from analysis.cli import main
from analysis.probes.activations import input_planes
from analysis.probes.concepts import CONCEPTS, get_concept
from analysis.probes.fit import FitConfig
from analysis.probes.positions import TEST, ConceptSet, PositionConfig, build
from analysis.probes.run import probe_concept


def random_fens(count: int, seed: int = 0) -> list[str]:
    """Positions of seeded random play (many checks, en-prise pieces and both sides to move)."""
    rng = np.random.default_rng(seed)
    out: list[str] = []
    while len(out) < count:
        board = chess.Board()
        for _ in range(int(rng.integers(6, 60))):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(moves[int(rng.integers(len(moves)))])
            if board.legal_moves.count() and not board.is_game_over():
                out.append(board.fen())
    return out[:count]


@pytest.fixture(scope="module")
def fen_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("fens") / "random.fen"
    path.write_text("\n".join(random_fens(3000)) + "\n")
    return path


# --- concepts ---------------------------------------------------------------------------------

def test_en_prise_on_real_squares_for_black_to_move():
    # Black to move; White's knight on d5 is attacked by Black's pawn on e6 (a lower-valued attacker)
    board = chess.Board("4k3/8/4p3/3N4/8/8/8/4K3 b - - 0 1")
    opp, own = get_concept("opp_en_prise").label(board), get_concept("own_en_prise").label(board)
    assert opp[chess.D5] == 1 and np.isnan(opp[chess.E6])
    assert own[chess.E6] == 0  # a knight on d5 does not attack e6
    assert np.isfinite(opp).sum() == 1  # the white king is no candidate


def test_mate_concepts_and_the_null_move_rule():
    scholar = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 2 4")
    assert get_concept("mate_in_one").label(scholar) == 1
    threatened = chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR b KQkq - 3 3")
    assert get_concept("mate_threat").label(threatened) == 1  # if Black passes, Qxf7#
    in_check = chess.Board("4k3/8/8/8/8/8/4r3/4K3 w - - 0 1")
    assert np.isnan(get_concept("mate_threat").label(in_check))  # undefined: no null move in check


def test_material_mobility_pin_and_passed_pawns_in_the_mover_frame():
    board = chess.Board("4k3/8/8/1P6/8/8/4q3/4R1K1 b - - 0 1")
    assert get_concept("material").label(board) == 9 - 6  # Black: queen; White: rook and pawn
    assert get_concept("passed_pawns").label(board) == 0 and get_concept("opp_passed_pawns").label(board) == 1
    assert get_concept("mobility").label(board) == board.legal_moves.count()
    assert get_concept("pin").label(chess.Board("4k3/4r3/8/8/8/8/4B3/4K3 w - - 0 1")) == 1


def test_unknown_concept_names_the_known_ones():
    with pytest.raises(ValueError, match="known are material"):
        get_concept("nope")


# --- sets and metrics ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def random_data():
    concepts = [CONCEPTS[n] for n in ("in_check", "any_opp_en_prise", "material", "opp_en_prise")]
    return build(concepts, PositionConfig(positions=1000, seed=3), fens=random_fens(6000, seed=1))


def test_every_binary_set_is_balanced_in_every_split(random_data):
    for cset in random_data.sets.values():
        if cset.concept.kind == "binary":
            for part in range(3):
                assert cset.labels[cset.rows(part)].mean() == 0.5
            assert cset.balance == 0.5


def test_a_concept_the_labels_make_random_scores_auroc_near_half(random_data):
    """Shuffled labels on the input planes: 4000 balanced positions, 800 tested (a null AUROC's
    standard error is 0.02 there), seeds fixed; the real labels of the same rows are read."""
    boards = [chess.Board(f) for f in dict.fromkeys(random_fens(6000, seed=2))][:4000]
    labels = np.array([get_concept("in_check").label(b) for b in boards], dtype=np.float32)
    rng = np.random.default_rng(7)
    shuffled = np.zeros(len(boards), dtype=np.float32)
    shuffled[rng.permutation(len(boards))[:len(boards) // 2]] = 1
    split = np.empty(len(boards), dtype=np.int8)
    for value in (0, 1):
        rows = rng.permutation(np.flatnonzero(shuffled == value))
        split[rows] = np.repeat([0, 1, 2], [len(rows) * 6 // 10, len(rows) // 5, len(rows) - len(rows) * 8 // 10])
    cset = ConceptSet(get_concept("in_check"), np.arange(len(boards)), shuffled, split)
    flat = input_planes(boards).reshape(len(boards), -1)
    score = probe_concept(cset, None, flat, FitConfig(bootstrap=50)).score
    assert (split == TEST).sum() == 800
    assert 0.45 <= score.score <= 0.55
    real = ConceptSet(cset.concept, cset.index, labels, split)
    assert probe_concept(real, None, flat, FitConfig(bootstrap=50)).score.score > 0.6


def test_too_few_positions_for_a_balanced_set_is_refused():
    with pytest.raises(ValueError, match="too small for a balanced set"):
        build([CONCEPTS["in_check"]], PositionConfig(positions=10), fens=random_fens(50))
    with pytest.raises(ValueError, match="too few for a balanced set"):
        build([CONCEPTS["mate_in_one"]], PositionConfig(positions=100), fens=random_fens(60))


# --- the CLI --------------------------------------------------------------------------------------

def _cli(*args) -> tuple[int, dict | None]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["probe", *args])
    return code, (json.loads(out.getvalue()) if code == 0 else None)


@pytest.fixture(scope="module")
def erased(tiny_checkpoint, fen_file, tmp_path_factory):
    args = ["--model", str(tiny_checkpoint), "--concepts", "in_check,opp_en_prise,material", "--positions", "300",
            "--seed", "5", "--data", str(tmp_path_factory.mktemp("nodata")), "--fens", str(fen_file), "--erase", "--json"]
    first, second = _cli(*args), _cli(*args)
    return first, second


def test_cli_json_contract(erased):
    code, out = erased[0]
    assert code == 0
    assert out["points"][0] == "embed" and len(out["points"]) == 5  # cf-tiny: embed, 2 layers x (attn, mlp)
    for name, c in out["concepts"].items():
        assert c["kind"] == CONCEPTS[name].kind
        assert len(c["trained"]) == len(c["untrained"]) == len(out["points"])
        for entry in c["trained"] + c["untrained"] + [c["input"]]:
            assert set(entry) == {"score", "low", "high"} and entry["low"] <= entry["score"] <= entry["high"]
        assert c["best_point"] in out["points"]
        # never accuracy: a binary metric is AUROC on a balanced test set
        assert c["metric"] == ("r2" if c["kind"] == "regression" else "auroc")
        if c["kind"] == "binary":
            assert c["balance"] == 0.5
        assert {"directions", "probe_after", "policy_kl", "random_kl_median"} <= set(c["erasure"])


def test_erasure_leaves_no_readable_concept_and_repeats_exactly(erased):
    (code, out), (code2, again) = erased
    assert code == code2 == 0 and json.dumps(out) == json.dumps(again)
    for name in ("in_check", "opp_en_prise"):
        e = out["concepts"][name]["erasure"]
        assert e["probe_after"]["score"] <= 0.6 and e["directions"] >= 1
        assert e["random_kl_median"] >= 0
    assert "capture_change" in out["concepts"]["opp_en_prise"]["erasure"]


def test_cli_errors_are_one_line_exit_2(tiny_checkpoint, capsys):
    for args, text in ((["--model", "no-such-net"], "unknown model"),
                       (["--model", str(tiny_checkpoint), "--concepts", "nope"], "unknown concept"),
                       (["--model", str(tiny_checkpoint), "--positions", "12"], "too small")):
        assert main(["probe", *args, "--json"]) == 2
        err = capsys.readouterr()
        assert err.out == "" and text in err.err and err.err.count("\n") == 1
