"""Neurons: most active units, a unit per square, attribution with exact re-measures, where else it fires."""

from __future__ import annotations

from pathlib import Path

import chess
import numpy as np
import pytest
import torch

from analysis.checkpoint import load_checkpoint
from analysis.lens import LensError, LensUnavailable, lens_for
from analysis.lens.neurons import carriers, most_active, unit_map, where_else
from analysis.models.lc0 import load_lc0
from tests.lc0_random_nets import write_net
from tests.test_lens_lc0 import FENS, SYNTH

ROOT = Path(__file__).resolve().parents[1]
POOL = FENS + ["rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
               "r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPP2PPP/R1BQ1RK1 w - - 0 7",
               "8/8/4k3/8/2K5/8/3P4/8 b - - 0 50", "4r1k1/pp3ppp/8/3q4/8/1P3Q2/P4PPP/4R1K1 b - - 3 25"]


@pytest.fixture(scope="module")
def attention(tmp_path_factory):
    return lens_for(load_lc0(write_net(tmp_path_factory.mktemp("lc0") / "synth.pb.gz", SYNTH, seed=3)))


def ffn_by_hand(lens, board: chess.Board, layer: int) -> np.ndarray:
    """(64, F) the layer's FFN activations, caught where they enter the second dense, in real squares."""
    kept = []
    handle = lens.model.encoders[layer].ffn.dense2.register_forward_pre_hook(lambda m, a: kept.append(a[0]))
    with torch.no_grad():
        lens.model(lens.prepare(board).inputs)
    handle.remove()
    frame = kept[0][0].numpy()  # (T, F): token t is square t of the mover's frame (input format 1: no transform)
    return frame[[s ^ 56 if board.turn == chess.BLACK else s for s in range(64)]]


@pytest.mark.parametrize("fen", FENS[:2])  # black and white to move
def test_most_active_and_the_square_map_are_the_layer_s_activations(attention, fen):
    board = chess.Board(fen)
    truth = ffn_by_hand(attention, board, 1)
    active = most_active(attention, board, 1, top=5)
    expected = np.argsort(-truth.max(0), kind="stable")[:5]
    assert [a.unit for a in active] == expected.tolist()
    assert active[0].peak == pytest.approx(truth.max(0)[expected[0]], abs=1e-5)
    assert active[0].square == chess.SQUARE_NAMES[int(truth[:, expected[0]].argmax())]
    np.testing.assert_allclose(unit_map(attention, board, 1, 7), truth[:, 7], atol=1e-5)


def test_carriers_are_measured_exactly_where_the_attribution_is_largest(attention):
    board = chess.Board(FENS[1])
    prepared = attention.prepare(board)
    with torch.no_grad():
        clean = attention.run(prepared)[1].logits[0]
    column = int(clean.argmax())
    found = carriers(attention, board, prepared.moves[column].uci(), top=6)
    assert len(found) == 6 and all(c.exact is not None for c in found)
    assert [abs(c.attribution) for c in found] == sorted((abs(c.attribution) for c in found), reverse=True)
    for c in found:  # each exact figure is that one unit zeroed on every square
        scales = torch.ones(1, SYNTH.encoders, SYNTH.ffn)
        scales[0, c.layer, c.unit] = 0
        with torch.no_grad():
            ablated = attention.run(prepared, 1, {"mlp": scales})[1].logits[0, column]
        assert c.exact == pytest.approx(float(ablated - clean[column]), abs=1e-5)
    signs = [np.sign(c.attribution) == np.sign(c.exact) for c in found]
    assert sum(signs) >= 4, found


def test_where_else_ranks_the_pool_batched_with_progress(attention):
    boards = [chess.Board(f) for f in POOL]
    calls = []
    scan = where_else(attention, boards, 2, 11, top=3, batch=3, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(3, 7), (6, 7), (7, 7)] and scan.complete and scan.scanned == 7
    peaks = [ffn_by_hand(attention, b, 2)[:, 11].max() for b in boards]
    assert [f.index for f in scan.top] == np.argsort(-np.array(peaks), kind="stable")[:3].tolist()
    assert scan.top[0].peak == pytest.approx(max(peaks), abs=1e-5) and scan.top[0].fen == POOL[scan.top[0].index]
    whole = where_else(attention, boards, 2, 11, top=3)  # one batch: the same answer
    assert [f.index for f in whole.top] == [f.index for f in scan.top]
    np.testing.assert_allclose(whole.mean, scan.mean, atol=1e-5)
    stopped = where_else(attention, boards, 2, 11, batch=2, progress=lambda done, total: False)
    assert not stopped.complete and stopped.scanned == 2 and len(stopped.top) == 2


def test_maia_channels_and_giraffe_units_and_what_has_no_neurons(attention):
    maia = lens_for(load_checkpoint(ROOT / "weights" / "maia-1900.safetensors")[0])
    board = chess.Board(FENS[0])
    branch = maia.branches(maia.prepare(board).inputs)[3][0]  # (C, 8, 8) mover's frame: black, so mirrored
    top = most_active(maia, board, 3, kind="channel", top=1)[0]
    real = branch[top.unit].flatten()[[s ^ 56 for s in range(64)]].detach().numpy()
    np.testing.assert_allclose(unit_map(maia, board, 3, top.unit, kind="channel"), real, atol=1e-5)
    giraffe = lens_for(load_checkpoint(ROOT / "weights" / "giraffe.safetensors")[0])
    assert most_active(giraffe, board, 0, top=3)[0].square is None
    with pytest.raises(LensUnavailable, match="no squares"):
        unit_map(giraffe, board, 0, 0)
    gateau = lens_for(load_checkpoint(ROOT / "weights" / "ag-cpu.safetensors")[0])
    with pytest.raises(LensUnavailable, match="no MLP"):
        most_active(gateau, board, 0)
    with pytest.raises(LensError, match="out of range"):
        unit_map(attention, board, 0, SYNTH.ffn)
    with pytest.raises(LensError, match="empty"):
        where_else(attention, [], 0, 0)


def test_chessformer_units_on_real_squares():
    model, meta = load_checkpoint(ROOT / "weights" / "cf-small.safetensors")
    lens = lens_for(model, meta.input_encoding)
    board = chess.Board(FENS[0])  # black to move: the mover's frame is mirrored
    kept = []
    handle = model.layers[2].ffn[2].register_forward_pre_hook(lambda m, a: kept.append(a[0]))
    with torch.no_grad():
        model(lens.prepare(board).inputs)
    handle.remove()
    real = kept[0][0][[s ^ 56 for s in range(64)]].numpy()
    np.testing.assert_allclose(unit_map(lens, board, 2, 5), real[:, 5], atol=1e-5)
    assert most_active(lens, board, 2, top=1)[0].unit == int(real.max(0).argmax())
    found = carriers(lens, board, "g8f6", top=3)
    assert all(c.exact is not None for c in found)


@pytest.fixture(scope="module")
def chessbench():
    model, meta = load_checkpoint(ROOT / "weights" / "retired" / "cb-cpu.safetensors")  # action value: one row per legal move
    return lens_for(model, meta.input_encoding)


def swiglu_by_hand(lens, board: chess.Board, layer: int) -> np.ndarray:
    """(64, F) the layer's SwiGLU units where they enter W_down, mean over the move rows, on real squares.
    The FEN lists rank 8 first; the model's sequence is BOS, side to move, then the 64 squares."""
    kept = []
    handle = lens.model.blocks[layer].ffn.down.register_forward_pre_hook(lambda m, a: kept.append(a[0]))
    with torch.no_grad():
        lens.model(lens.prepare(board).inputs)
    handle.remove()
    sequence = kept[0].mean(0).numpy()  # (T, F)
    return sequence[[2 + (7 - chess.square_rank(s)) * 8 + chess.square_file(s) for s in range(64)]]


def test_chessbench_units_are_read_on_the_fen_s_square_tokens(chessbench):
    from analysis.encoding.chessbench import CHARACTERS

    boards = [chess.Board(FENS[0]), chess.Board()]  # black to move (never flipped); 20 moves: rows differ
    acts = chessbench.activations([chessbench.prepare(b) for b in boards], "mlp", 2)  # one batch, two positions
    assert acts.shape == (2, 64, chessbench.units["mlp"].per_layer)
    for board, got in zip(boards, acts):
        np.testing.assert_allclose(got.numpy(), swiglu_by_hand(chessbench, board, 2), atol=1e-5)
        tokens = chessbench.prepare(board).inputs[0]  # the row without BOS: square s's token is its piece
        for s in (chess.A1, chess.E1, chess.D8, chess.H8, chess.E4):
            piece = board.piece_at(s)
            assert int(tokens[1 + (7 - chess.square_rank(s)) * 8 + chess.square_file(s)]) == \
                CHARACTERS.index(piece.symbol() if piece else ".")
    board = boards[0]
    truth = swiglu_by_hand(chessbench, board, 1)
    active = most_active(chessbench, board, 1, top=4)
    assert [a.unit for a in active] == np.argsort(-truth.max(0), kind="stable")[:4].tolist()
    assert active[0].square == chess.SQUARE_NAMES[int(truth[:, active[0].unit].argmax())]
    np.testing.assert_allclose(unit_map(chessbench, board, 1, 9), truth[:, 9], atol=1e-5)
    with pytest.raises(LensUnavailable, match="'head' units have no activations"):
        most_active(chessbench, board, 1, kind="head")


def _rank(x) -> np.ndarray:
    return np.argsort(np.argsort(x, kind="stable"), kind="stable")


def test_chessbench_carriers_are_exact_removals_and_agree_with_attribution(chessbench):
    import copy

    board = chess.Board()
    prepared = chessbench.prepare(board)
    column = [m.uci() for m in prepared.moves].index("e2e4")
    with torch.no_grad():
        clean = chessbench.run(prepared)[1].logits[0, column]
    found = carriers(chessbench, board, "e2e4", top=8)
    assert len(found) == 8 and all(c.exact is not None for c in found)
    for c in found[:3]:  # the exact figure is the network with the unit's W_down column removed
        model = copy.deepcopy(chessbench.model)
        with torch.no_grad():
            model.blocks[c.layer].ffn.down.weight[:, c.unit] = 0
            removed = type(chessbench)(model, chessbench.encoding).run(prepared)[1].logits[0, column]
        assert c.exact == pytest.approx(float(removed - clean), abs=1e-4)
    attributed, exact = np.array([c.attribution for c in found]), np.array([c.exact for c in found])
    assert (np.sign(attributed) == np.sign(exact)).sum() >= 7, found
    assert np.corrcoef(_rank(attributed), _rank(exact))[0, 1] >= 0.7, found  # Spearman over the top units


def test_chessbench_where_else_batches_positions_of_different_row_counts(chessbench):
    boards = [chess.Board(f) for f in POOL]
    scan = where_else(chessbench, boards, 3, 40, top=3, batch=3)
    peaks = [swiglu_by_hand(chessbench, b, 3)[:, 40].max() for b in boards]
    assert [f.index for f in scan.top] == np.argsort(-np.array(peaks), kind="stable")[:3].tolist()
    assert scan.top[0].peak == pytest.approx(max(peaks), abs=1e-5)
