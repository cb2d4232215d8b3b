"""The lens on AlphaGateau (shipped ag-cpu): node and edge streams read through the heads, each GATEAU
layer's head write exact (write + self term = the layer's node output), scale 1 = clean."""

from __future__ import annotations

import copy
from pathlib import Path

import chess
import pytest
import torch

from analysis.checkpoint import load_checkpoint
from analysis.lens import lens_for
from analysis.lens.core import grid, logit_lens
from analysis.models.alphagateau.model import _graph_tensors

ROOT = Path(__file__).resolve().parents[1]
FENS = ["r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 2 3",
        "r3k2r/pp1n1ppp/2p1pn2/q7/1bPP4/2N1PN2/PP1B1PPP/R2QKB1R w KQkq - 1 10"]


@pytest.fixture(scope="module")
def lens():
    return lens_for(load_checkpoint(ROOT / "weights" / "ag-cpu.safetensors")[0])


@pytest.mark.parametrize("fen", FENS)
def test_head_write_plus_self_term_is_the_layer_output(lens, fen):
    prepared = lens.prepare(chess.Board(fen))
    with torch.no_grad():
        for layer in range(lens.units["head"].layers):
            write, own, output = lens.head_writes(prepared, layer)
            assert write.shape == (1, 64, lens.model.config.width)
            torch.testing.assert_close(write.sum(0) + own, output, atol=1e-5, rtol=1e-5)
            assert write.abs().max() > 1e-3


@pytest.mark.parametrize("fen", FENS)
def test_scale_one_is_clean_and_the_last_readout_is_the_output(lens, fen):
    prepared = lens.prepare(chess.Board(fen))
    units = lens.units["head"]
    with torch.no_grad():
        own = lens.model(prepared.inputs)
        streams, out = lens.run(prepared, 2, {"head": torch.ones(2, units.layers, 1)}, capture=True)
        last = lens.unembed(prepared, streams[-1], lens.readouts[-1])
    edges = prepared.extra["indices"]
    assert len(streams) == len(lens.readouts) == 1 + lens.model.config.blocks
    assert streams[0].shape[1] == 64 + own["policy"].shape[1]  # nodes then edges
    for read in (out, last):
        torch.testing.assert_close(read.logits, own["policy"][:, edges].expand(2, -1), atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(read.score, ((own["value"] + 1) / 2).expand(2), atol=1e-6, rtol=1e-6)
        assert read.wdl is None


def test_a_removed_head_leaves_the_self_term(lens):
    """Layer 0 (block 0's first GATEAU) at scale 0: block 0 computed by hand with h' = W_0 h there."""
    prepared = lens.prepare(chess.Board(FENS[1]))
    scales = torch.ones(1, lens.units["head"].layers, 1)
    scales[0, 0, 0] = 0
    block = lens.model.blocks[0]
    with torch.no_grad():
        clean, _ = lens.run(prepared, capture=True)
        scaled, _ = lens.run(prepared, 1, {"head": scales}, capture=True)
        h, g = clean[0][:, :64], clean[0][:, 64:]
        senders, receivers, _ = _graph_tensors(8, "cpu")
        _, g1, _ = block.gateau1(block.norm_h1(h), block.norm_g1(g), senders, receivers)
        h1 = block.gateau1.w_0(block.norm_h1(h))
        x, y, _ = block.gateau2(block.norm_h2(h1), block.norm_g2(g1), senders, receivers)
    torch.testing.assert_close(scaled[1], torch.cat((h + x, g + y), dim=1), atol=1e-5, rtol=1e-5)
    assert (scaled[1] - clean[1]).abs().max() > 1e-3


def test_lens_and_grid_run_and_say_what_does_not_apply(lens):
    board = chess.Board(FENS[0])
    view = logit_lens(lens, board)
    assert view.logits.shape == (len(lens.readouts), board.legal_moves.count())
    top = view.top()[-1]
    exact = grid(lens, board, top)
    assert exact.logit.shape == (lens.units["head"].layers, 1) and exact.exact.all()
    assert "no MLP" in lens.why_not("mlp") and "WDL" in lens.why_not("wdl") and "eq. 5" in lens.why_not("split")


def test_a_channel_is_one_channel_of_a_block_s_node_write(lens):
    """Activations: the block's node write x (stream after - before) on real squares (black to move:
    node s ^ 56 is square s); scaling a channel equals gateau2 with that output channel's rows scaled."""
    from analysis.lens.core import ablate, unit_scales
    from analysis.lens.neurons import carriers, unit_map

    board = chess.Board(FENS[0])
    prepared = lens.prepare(board)
    with torch.no_grad():
        streams, clean = lens.run(prepared, capture=True)
        _, ones = lens.run(prepared, 2, {"channel": unit_scales(lens, "channel", 2)})
    write = (streams[2] - streams[1])[0, :64]  # block 1's node write, nodes in the mover's frame
    acts = lens.activations([lens.prepare(chess.Board()), prepared], "channel", 1)
    torch.testing.assert_close(acts[1], write[[s ^ 56 for s in range(64)]], atol=1e-5, rtol=1e-5)
    assert unit_map(lens, board, 1, 7, kind="channel").tolist() == pytest.approx(write[[s ^ 56 for s in range(64)], 7].tolist(), abs=1e-5)
    torch.testing.assert_close(ones.logits, clean.logits.expand(2, -1), atol=1e-5, rtol=1e-5)

    def reference(layer, channel, scale):
        model = copy.deepcopy(lens.model)
        with torch.no_grad():
            gateau = model.blocks[layer].gateau2
            for w in (gateau.w_0, gateau.w_h, gateau.w_g):
                w.weight[channel] *= scale
            return type(lens)(model, lens.encoding).run(prepared)[1]

    scaled = ablate(lens, board, "channel", 0, 5, -1.0)
    flipped = reference(0, 5, -1.0)
    assert scaled.scaled == pytest.approx(flipped.logits[0].softmax(-1).tolist(), abs=1e-5)
    assert scaled.scaled_score == pytest.approx(float(flipped.score[0]), abs=1e-5)
    column = [m.uci() for m in prepared.moves].index("g8f6")
    for c in carriers(lens, board, "g8f6", "channel", top=3):
        removed = reference(c.layer, c.unit, 0.0).logits[0, column]
        assert c.exact == pytest.approx(float(removed - clean.logits[0, column]), abs=1e-4)


def test_a_5x5_board_s_channels_are_refused_with_the_reason():
    from analysis.gardner import GardnerBoard
    from analysis.lens import LensUnavailable
    from analysis.lens.neurons import most_active

    model, meta = load_checkpoint(ROOT / "weights" / "gardner" / "ag-cpu-gardner.safetensors")
    gardner = lens_for(model, meta.input_encoding)
    with pytest.raises(LensUnavailable, match="8x8 boards only"):
        most_active(gardner, GardnerBoard(), 0, "channel")
