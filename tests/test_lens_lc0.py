"""The lens on lc0 nets: exact per-head writes, scale 1 = clean, the last readout = the network's output,
the smolgen split, attribution vs exact ablation; for the SE-ResNet (Maia) blocks and channels."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import chess
import numpy as np
import pytest
import torch

from analysis.checkpoint import load_checkpoint
from analysis.lens import lens_for
from analysis.encoding.lc0_formats import encode_boards
from analysis.lens.core import grid, logit_lens
from analysis.models.lc0 import evaluate_boards, load_lc0
from analysis.models.lc0.config import AttentionConfig
from tests.lc0_random_nets import write_net

ROOT = Path(__file__).resolve().parents[1]
FENS = ["r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 2 3",
        "r3k2r/pp1n1ppp/2p1pn2/q7/1bPP4/2N1PN2/PP1B1PPP/R2QKB1R w KQkq - 1 10",
        "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"]
# A small smolgen net of lc0's BT layout: 3 layers x 4 heads, so a head grid has 12 cells to rank.
SYNTH = AttentionConfig(encoders=3, embed=32, heads=4, d_model=32, ffn=48, dense_features=8, embedding_ffn=48,
                        gates=True, smolgen_compress=4, smolgen_hidden=16, smolgen_gen=8, policy_embed=24,
                        policy_dim=16, shared_policy_embedding=True, value_channels=8, moves_left_channels=8,
                        moves_left_hidden=32, input_format=1)


@pytest.fixture(scope="module")
def attention(tmp_path_factory):
    model = load_lc0(write_net(tmp_path_factory.mktemp("lc0") / "synth.pb.gz", SYNTH, seed=3))
    return lens_for(model)


@pytest.fixture(scope="module")
def maia():
    return lens_for(load_checkpoint(ROOT / "weights" / "maia-1900.safetensors")[0])


def own_output(lens, prepared):
    with torch.no_grad():
        return lens.model(prepared.inputs)


@pytest.mark.parametrize("fen", FENS)
def test_head_writes_sum_with_the_bias_to_the_attention_output(attention, fen):
    prepared = attention.prepare(chess.Board(fen))
    with torch.no_grad():
        for layer in range(SYNTH.encoders):
            writes, bias, output = attention.head_writes(prepared, layer)
            assert writes.shape == (SYNTH.heads, 64, SYNTH.embed)
            torch.testing.assert_close(writes.sum(0) + bias, output, atol=1e-5, rtol=1e-5)
            assert writes.abs().amax(dim=(1, 2)).min() > 0  # every head writes something


@pytest.mark.parametrize("fen", FENS)
def test_scale_one_is_the_clean_forward_and_the_last_readout_is_the_output(attention, fen):
    prepared = attention.prepare(chess.Board(fen))
    own = own_output(attention, prepared)
    ones = {kind: torch.ones(3, u.layers, u.per_layer) for kind, u in attention.units.items()}
    with torch.no_grad():
        residuals, out = attention.run(prepared, 3, ones, capture=True)
        last = attention.unembed(prepared, residuals[-1], attention.readouts[-1])
    assert len(residuals) == len(attention.readouts) == 1 + 2 * SYNTH.encoders
    for read in (out, last):
        torch.testing.assert_close(read.logits, own["policy"][:, prepared.extra["indices"]].expand(3, -1),
                                   atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(read.score, ((own["q"] + 1) / 2).expand(3), atol=1e-6, rtol=1e-6)
        torch.testing.assert_close(read.wdl, own["wdl"].expand(3, -1), atol=1e-6, rtol=1e-6)


def test_a_scaled_head_moves_the_stream_by_exactly_its_write(attention):
    prepared = attention.prepare(chess.Board(FENS[1]))
    layer, head, s = 1, 2, -0.5
    scales = torch.ones(1, SYNTH.encoders, SYNTH.heads)
    scales[0, layer, head] = s
    enc = attention.model.encoders[layer]
    with torch.no_grad():
        clean, _ = attention.run(prepared, capture=True)
        scaled, _ = attention.run(prepared, 1, {"head": scales}, capture=True)
        writes, _, output = attention.head_writes(prepared, layer)
        x = clean[2 * layer]  # the stream entering the layer
        expected = enc.ln1(enc.alpha * (output - (1 - s) * writes[head]) + x[0])
    torch.testing.assert_close(scaled[2 * layer + 1][0], expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(scaled[2 * layer], clean[2 * layer])  # earlier layers untouched


@pytest.mark.parametrize("fen", FENS[:2])  # black to move (mirrored frame) and white
def test_the_attention_split_recombines_into_the_network_s_own_maps(attention, fen):
    board = chess.Board(fen)
    prepared = attention.prepare(board)
    real = [s ^ 56 if board.turn == chess.BLACK else s for s in range(64)]  # input format 1: no transform
    with torch.no_grad():
        maps = attention.model(prepared.inputs, need_attention=True)["attention"][0]  # (L, H, T, T) mover's frame
        for layer in range(SYNTH.encoders):
            split = attention.attention_split(prepared, layer)
            torch.testing.assert_close(split["final"], maps[layer][:, real][:, :, real], atol=1e-6, rtol=1e-5)
            torch.testing.assert_close(split["content"].sum(-1), torch.ones(SYNTH.heads, 64))
            # softmax(QK^T) carries QK^T up to a per-row constant: adding smolgen's bias gives the final map
            again = torch.softmax(split["content"].log() + split["position"], dim=-1)
            torch.testing.assert_close(again, split["final"], atol=1e-5, rtol=1e-4)
            assert (split["content"] - split["final"]).abs().max() > 1e-3  # the bias does change the map


def test_a_net_without_smolgen_has_no_split(tmp_path):
    plain = AttentionConfig(encoders=1, embed=16, heads=2, d_model=16, ffn=16, embedding="pe_map", policy_embed=16,
                            policy_dim=8, value_channels=4, input_format=1)
    lens = lens_for(load_lc0(write_net(tmp_path / "plain.pb.gz", plain, seed=1)))
    assert lens.has("head") and "no smolgen" in lens.why_not("split")
    with pytest.raises(ValueError, match="no smolgen"):
        lens.attention_split(lens.prepare(chess.Board()), 0)


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra, rb = (np.argsort(np.argsort(x.ravel())).astype(float) for x in (a, b))
    return float(np.corrcoef(ra, rb)[0, 1])


def test_attribution_ranks_the_heads_as_exact_ablation_does(attention):
    """Spearman over all 12 heads, for each position's top move (figures are the issue's rank agreement)."""
    agreements = []
    for fen in FENS:
        board = chess.Board(fen)
        prepared = attention.prepare(board)
        with torch.no_grad():
            _, out = attention.run(prepared)
        move = prepared.moves[int(out.logits[0].argmax())].uci()
        exact = grid(attention, board, move)
        assert exact.exact.all()
        estimated = grid(attention, board, move, top=0)
        assert not estimated.exact.any()
        agreements.append(spearman(estimated.attribution, exact.logit))
    assert min(agreements) > 0.5, agreements


def test_maia_blocks_and_channels_are_exact(maia):
    prepared = maia.prepare(chess.Board(FENS[1]))
    own = own_output(maia, prepared)
    blocks = maia.model.config.blocks
    ones = {kind: torch.ones(2, u.layers, u.per_layer) for kind, u in maia.units.items()}
    with torch.no_grad():
        residuals, out = maia.run(prepared, 2, ones, capture=True)
        last = maia.unembed(prepared, residuals[-1], maia.readouts[-1])
        branches = maia.branches(prepared.inputs)
    assert maia.readouts == ["embed"] + [f"{i}.block" for i in range(blocks)]
    for read in (out, last):
        torch.testing.assert_close(read.logits[0], own["policy"][0, prepared.extra["indices"]], atol=1e-4, rtol=1e-5)
        torch.testing.assert_close(read.wdl[0], own["wdl"][0], atol=1e-6, rtol=1e-5)
    for i in range(blocks):  # the channels' writes (the branch) plus the stream, through the activation
        torch.testing.assert_close(torch.relu(residuals[i][:1] + branches[i]), residuals[i + 1][:1])


def test_maia_a_removed_block_passes_its_input_through(maia):
    prepared = maia.prepare(chess.Board(FENS[0]))
    units = maia.units
    block = torch.ones(1, units["block"].layers, 1)
    block[0, 2] = 0
    channels = torch.ones(1, units["channel"].layers, units["channel"].per_layer)
    channels[0, 2] = 0
    with torch.no_grad():
        clean, _ = maia.run(prepared, capture=True)
        no_block, a = maia.run(prepared, 1, {"block": block}, capture=True)
        no_channels, b = maia.run(prepared, 1, {"channel": channels}, capture=True)
    torch.testing.assert_close(no_block[3], clean[2])  # relu(0 + x) = x: the stream is post-ReLU
    torch.testing.assert_close(a.logits, b.logits)
    assert (a.logits - _clean_logits(maia, prepared)).abs().max() > 1e-3


def _clean_logits(lens, prepared):
    with torch.no_grad():
        return lens.run(prepared)[1].logits


def test_capabilities_say_why_not(maia, attention):
    assert "convolutional" in maia.why_not("head") and "channel" in maia.why_not("mlp")
    assert "convolutional" in maia.why_not("split") and attention.has("split")
    with pytest.raises(ValueError, match="no attention heads"):
        maia.head_writes(maia.prepare(chess.Board()), 0)
    assert attention.has("head") and attention.has("mlp") and attention.has("wdl")
    with pytest.raises(ValueError, match="unknown readout"):
        attention.unembed(attention.prepare(chess.Board()), torch.zeros(1, 64, SYNTH.embed), "9.attn")


def test_a_canonical_format_net_reads_real_moves_and_squares(tmp_path):
    """Input format 5 flips/mirrors/transposes boards without castling rights: the lens's moves and maps
    must still be the real ones, as ``evaluate_boards`` gives them."""
    lens = lens_for(load_lc0(write_net(tmp_path / "v2.pb.gz", replace(SYNTH, input_format=5), seed=2)))
    boards = [chess.Board(f) for f in ("2k5/8/8/8/8/8/8/6RK w - - 0 1", "5r2/1k6/8/2K5/8/8/8/8 b - - 0 1")]
    assert all(e.transform for e in encode_boards(boards, 5)[1])
    for board, answer in zip(boards, evaluate_boards(lens.model, boards, attention=True)):
        view = logit_lens(lens, board)
        probs = dict(zip(view.moves, view.probs[-1]))
        assert max(abs(probs[move.uci()] - p) for move, p in answer.policy.items()) < 1e-5
        final = lens.attention_split(lens.prepare(board), 2)["final"].numpy()
        np.testing.assert_allclose(final, answer.attention[2], atol=1e-5)
