"""Head labels (analysis.heads): known-answer maps, a random network, mirror invariance, the CLI."""

from __future__ import annotations

import json

import chess
import numpy as np
import pytest

from analysis.evaluator import Capabilities, Evaluation
from analysis.heads import LABELS, AtlasConfig, compute_atlas, show_me
from analysis.heads.sample import SAMPLE_PATH, SAMPLE_SIZE, build_sample, load_sample, sample_text
from tests.conftest import require_shared_data


def _rows(targets) -> np.ndarray:
    """(64, 64) map: row q spreads its attention evenly over targets(q), else over every square."""
    out = np.full((64, 64), 1 / 64)
    for q in range(64):
        squares = [s for s in targets(q) if s != q]
        if squares:
            out[q] = 0
            out[q, squares] = 1 / len(squares)
    return out


class HandBuilt:
    """An 'evaluator' whose heads follow one pattern each, exactly, in real squares."""

    name = "hand-built"
    HEADS = ("knight-moves", "opponent-queen", "same-colour-squares", "unlabelled", "rook-moves", "queen-moves")
    capabilities = Capabilities(attention=(1, len(HEADS)))

    def evaluate(self, boards, *, attention=False, temperature=1.0):
        return [Evaluation(score=0.5, attention=self.maps(board)[None]) for board in boards]

    @staticmethod
    def maps(board: chess.Board) -> np.ndarray:
        queen = list(board.pieces(chess.QUEEN, not board.turn))
        colour = lambda q: [s for s in range(64) if (chess.square_file(s) + chess.square_rank(s)) % 2
                            == (chess.square_file(q) + chess.square_rank(q)) % 2]
        rook = lambda q: chess.SquareSet(chess.BB_RANK_ATTACKS[q][0] | chess.BB_FILE_ATTACKS[q][0])
        bishop = lambda q: chess.SquareSet(chess.BB_DIAG_ATTACKS[q][0])
        return np.stack([_rows(lambda q: chess.SquareSet(chess.BB_KNIGHT_ATTACKS[q])), _rows(lambda q: queen),
                         _rows(colour), _rows(lambda q: []), _rows(rook),
                         _rows(lambda q: list(rook(q)) + list(bishop(q)))])


def test_hand_built_heads_get_their_labels():
    atlas = compute_atlas(HandBuilt(), AtlasConfig(positions=48))
    assert atlas.labels == [list(HandBuilt.HEADS)]
    assert atlas.lift["knight-moves"][0][0] > 6  # 64 / 8 squares at the most, fewer on the rim
    assert atlas.lift["opponent-queen"][0][1] > 50
    assert atlas.lift["knight-moves"][0][3] == pytest.approx(1.0, abs=0.02)  # the uniform head
    assert atlas.static[0][0] == pytest.approx(1.0) and atlas.static[0][1] < 0.5  # the queen moves about


def test_mirrored_positions_get_the_same_scores():
    """Black to move and the mirrored position (white to move) score alike. A network sees the
    side-to-move plane too, so only maps that ignore it (these) must give equal numbers."""
    black = [b for b in load_sample() if b.turn == chess.BLACK][:12]
    one = compute_atlas(HandBuilt(), boards=black)
    other = compute_atlas(HandBuilt(), boards=[b.mirror() for b in black])
    assert one.labels == other.labels == [list(HandBuilt.HEADS)]
    for label in one.lift:
        assert np.allclose(one.lift[label], other.lift[label], atol=1e-6), label
    assert np.allclose(one.static, other.static, atol=1e-6)


@pytest.fixture(scope="module")
def tiny_evaluator(tiny_checkpoint):
    from analysis.checkpoint import load_evaluator

    return load_evaluator(tiny_checkpoint, device="cpu")


def test_a_random_network_is_mostly_unlabelled(tiny_evaluator):
    atlas = compute_atlas(tiny_evaluator, AtlasConfig(positions=16))
    labels = [label for row in atlas.labels for label in row]
    assert labels.count("unlabelled") >= 0.75 * len(labels)
    assert set(labels) <= set(LABELS)
    assert len(atlas.thumbnails[0][0]) == 64 and sum(atlas.thumbnails[0][0]) == pytest.approx(1, abs=0.01)


def test_cli_json_has_the_issue_shape(tiny_checkpoint, capsys):
    from analysis.cli import main

    assert main(["heads", "--model", str(tiny_checkpoint), "--positions", "4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"layers", "heads", "labels", "lift"}
    assert (out["layers"], out["heads"]) == (2, 4) and len(out["labels"]) == 2 and len(out["labels"][0]) == 4
    assert set(out["lift"]) == set(LABELS) - {"unlabelled"}
    assert all(len(rows) == 2 and len(rows[0]) == 4 for rows in out["lift"].values())


@pytest.mark.parametrize("argv, message", [
    (["--positions", "0"], "--positions must be 1 to 256"),
    (["--positions", "999"], "--positions must be 1 to 256"),
])
def test_cli_refuses_bad_input(tiny_checkpoint, capsys, argv, message):
    from analysis.cli import main

    assert main(["heads", "--model", str(tiny_checkpoint), *argv]) == 2
    assert message in capsys.readouterr().err


def test_cli_refuses_a_missing_file(tmp_path, capsys):
    from analysis.cli import main

    assert main(["heads", "--model", str(tmp_path / "none.safetensors")]) == 2
    assert "none.safetensors" in capsys.readouterr().err


def test_an_evaluator_without_attention_has_no_atlas():
    from analysis.evaluator import MaterialEvaluator

    with pytest.raises(ValueError, match="has no attention maps"):
        compute_atlas(MaterialEvaluator())


def test_the_sample_is_fixed_and_mixed():
    boards = load_sample()
    assert len(boards) == SAMPLE_SIZE and all(b.is_valid() for b in boards)
    assert 0.35 < sum(b.turn == chess.BLACK for b in boards) / SAMPLE_SIZE < 0.65
    assert len(load_sample(10)) == 10
    with pytest.raises(ValueError):
        load_sample(0)


def test_the_sample_is_what_the_shared_data_gives():
    shared = require_shared_data()
    assert SAMPLE_PATH.read_text() == sample_text(build_sample(shared))


def test_show_me_picks_a_roomy_square_and_its_pattern():
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    knight = show_me(board, "knight-moves")
    assert len(knight.squares) == 8 and chess.square_name(knight.query) in ("d4", "e4", "d5", "e5", "f3")
    queen = show_me(board, "opponent-queen")
    assert queen.squares == [chess.D8] and queen.query != chess.D8
    assert show_me(board.mirror(), "opponent-queen").squares == [chess.D1]  # black to move: white's queen
    empty = show_me(chess.Board("4k3/8/8/8/8/8/8/4K3 w - - 0 1"), "opponent-queen")
    assert empty.query is None and "try one" in empty.note
    with pytest.raises(ValueError, match="no pattern"):
        show_me(board, "unlabelled")


# One small preset per family whose networks have attention; the registry check below makes a new
# attention family join this list.
ATTENTION_PRESETS = {"chessformer": "cf-tiny", "lc0-attention": "bt-tiny", "chessbench": "cb-tiny",
                     "alphagateau": "ag-tiny"}


def test_every_family_with_attention_is_covered():
    from analysis.models import load_families

    with_attention = {f.name for f in load_families()
                      if any(f.capabilities(c).attention for c in f.presets.values())}
    assert with_attention == set(ATTENTION_PRESETS)


@pytest.mark.parametrize("family_name", ATTENTION_PRESETS)
def test_every_attention_family_gets_an_atlas(family_name):
    """Random weights: each family's maps reach the scorer as (L, H, 64, 64) rows in real squares,
    whatever its own token layout (graph edges, FEN tokens, lc0 planes), and an untrained network's
    heads stay unlabelled in every family (a graph network's heads, which can only attend along
    queen and knight moves, were all "queen-moves" against a 64-square uniform baseline)."""
    import torch

    from analysis.models.inference import TorchEvaluator
    from analysis.models import get_family

    family = get_family(family_name)
    config = family.presets[ATTENTION_PRESETS[family_name]]
    torch.manual_seed(0)
    evaluator = TorchEvaluator(family.build(config), device="cpu", encoding=family.encoding_of(config))
    progress = []
    atlas = compute_atlas(evaluator, AtlasConfig(positions=6, batch=4), progress=lambda *p: progress.append(p))
    layers, heads = family.capabilities(config).attention
    assert (atlas.layers, atlas.heads, atlas.positions) == (layers, heads, 6) and progress == [(4, 6), (6, 6)]
    assert len(atlas.labels) == layers and all(len(row) == heads for row in atlas.labels)
    labels = [label for row in atlas.labels for label in row]
    assert set(labels) == {"unlabelled"}
    assert all(np.array(atlas.lift[p]).shape == (layers, heads) for p in atlas.lift)
    board_mass = np.array(atlas.thumbnails).sum(-1)  # d4's row; ChessBench also attends to non-square tokens
    assert np.allclose(board_mass, 1, atol=0.01) if family_name != "chessbench" else (0.5 < board_mass).all()


def test_a_real_networks_atlas_is_the_same_for_black_and_the_mirrored_position():
    """The hand-built mirror test above with a real network's maps, through the evaluator's own
    un-mirroring: lc0's input format 4 has no side-to-move plane, so black to move and the mirrored
    position are the same input and must score exactly alike."""
    from analysis.eval.specs import resolve_evaluator

    evaluator = resolve_evaluator(str(require_shared_data("lc0/synthetic/synth_t1_pemap_single.pb.gz")))
    black = [b for b in load_sample() if b.turn == chess.BLACK][:6]
    one = compute_atlas(evaluator, boards=black)
    other = compute_atlas(evaluator, boards=[b.mirror() for b in black])
    assert one.labels == other.labels
    for label in one.lift:
        assert np.allclose(one.lift[label], other.lift[label], atol=1e-4), label
    assert np.allclose(one.static, other.static, atol=1e-4)
    assert np.allclose(one.thumbnails, other.thumbnails, atol=1e-4)


@pytest.mark.parametrize("support_name", [None, "moves"])
@pytest.mark.parametrize("board_mass", [1.0, 0.8])
def test_a_head_uniform_over_what_it_can_reach_has_lift_one(support_name, board_mass):
    """The baseline is a head spreading the row's board mass over the keys it can reach: all 64
    squares, or a graph network's queen and knight moves; the rest of a row (board mass under 1)
    may sit on tokens that are not squares, as ChessBench's."""
    from analysis.heads.patterns import masks, support
    from analysis.heads.scoring import ScoreAccumulator

    reachable = support(support_name)
    maps = board_mass * reachable / reachable.sum(axis=1, keepdims=True)
    accumulator = ScoreAccumulator(1, 1, reachable=reachable)
    for board in load_sample(4):
        accumulator.add(maps[None, None], masks(board))
    scores = accumulator.scores()
    reachable_patterns = scores.uniform[0, 0] > 0  # self is not reachable on a graph
    assert np.allclose(scores.lift[0, 0][reachable_patterns], 1, atol=1e-5)
    assert scores.labels() == [["unlabelled"]]
    assert reachable_patterns.sum() == len(LABELS) - 1 - (support_name == "moves")
