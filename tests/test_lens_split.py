"""The attention split (issue 28 item 6) on Chessformer: content softmax(q k^T / sqrt(D)), the
position term added to those logits (relative_bias's learned bias, Shaw's a^Q/a^K terms) and the
final map, which must be the network's own map as the site shows it; families whose logits have no
position term say why."""

from __future__ import annotations

import chess
import numpy as np
import pytest
import torch

from analysis.checkpoint import load_evaluator
from analysis.lens import lens_for
from analysis.models import get_family
from analysis.models.inference import make_evaluator
from tests.conftest import ROOT

FENS = [
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "r3k2r/ppp2ppp/2n1bn2/3qp3/3P4/2N1BN2/PPP1QPPP/R3K2R b KQkq - 4 9",  # Black to move: the mirrored frame
]


def _random_chessformer(position: str):
    torch.manual_seed(3)
    fam = get_family("chessformer")
    model = fam.build(fam.config(dict(layers=2, embed=32, heads=4, ffn=48, position=position, value_channels=4,
                                      value_embed=8, reward_buckets=4))).eval()
    for layer in model.layers:  # the init's position terms are (near) zero: give them something to add
        for table in ("relative_bias", "shaw_q", "shaw_k"):
            if hasattr(layer.attention, table):
                torch.nn.init.normal_(getattr(layer.attention, table), std=1.0)
    return make_evaluator(model, device="cpu")


NETWORKS = {
    "cf-small (shaw)": lambda: load_evaluator(ROOT / "weights" / "cf-small.safetensors", device="cpu"),
    "shaw": lambda: _random_chessformer("shaw"),
    "relative_bias": lambda: _random_chessformer("relative_bias"),
}


@pytest.fixture(scope="module", params=sorted(NETWORKS))
def net(request):
    evaluator = NETWORKS[request.param]()
    return evaluator, lens_for(evaluator.model, evaluator.encoding)


@pytest.mark.parametrize("fen", FENS)
def test_the_split_recombines_into_the_map_the_site_shows(net, fen):
    evaluator, lens = net
    board = chess.Board(fen)
    shown = evaluator.evaluate([board], attention=True)[0].attention  # (L, H, 64, 64), real squares
    prepared = lens.prepare(board)
    for layer in range(evaluator.model.config.layers):
        split = lens.attention_split(prepared, layer)
        heads = evaluator.model.config.heads
        assert all(m.shape == (heads, 64, 64) for m in split.values())
        np.testing.assert_allclose(split["final"].numpy(), shown[layer], atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(split["content"].sum(-1), torch.ones(heads, 64))
        # softmax keeps the content logits up to a per-row constant: adding the position term gives the final map
        again = torch.softmax(split["content"].log() + split["position"], dim=-1)
        torch.testing.assert_close(again, split["final"], atol=1e-5, rtol=1e-4)
        assert (split["content"] - split["final"]).abs().max() > 1e-3  # the position term does change the map


def test_the_relative_bias_is_the_learned_bias_of_each_displacement():
    evaluator = _random_chessformer("relative_bias")
    lens = lens_for(evaluator.model, evaluator.encoding)
    board = chess.Board(FENS[1])  # Black to move: real squares mirror the tokens, displacements keep their sign
    position = lens.attention_split(lens.prepare(board), 1)["position"]
    bias = evaluator.model.layers[1].attention.relative_bias  # (H, 225): 15 * (dr + 7) + (df + 7) in the token frame
    for query, key in ((chess.E4, chess.G6), (chess.A1, chess.H8), (chess.D5, chess.D5)):
        q, k = query ^ 56, key ^ 56  # the mover's (Black's) token of each real square
        dr, df = q // 8 - k // 8, q % 8 - k % 8
        torch.testing.assert_close(position[:, query, key], bias[:, 15 * (dr + 7) + (df + 7)])


def test_families_without_a_position_term_say_why():
    absolute = _random_chessformer("absolute")
    lens = lens_for(absolute.model, absolute.encoding)
    assert lens.has("head") and "added to the tokens" in lens.why_not("split")
    with pytest.raises(ValueError, match="absolute positions"):
        lens.attention_split(lens.prepare(chess.Board()), 0)
    chessbench = load_evaluator(ROOT / "weights" / "retired" / "cb-cpu.safetensors", device="cpu")
    assert "position embedding" in lens_for(chessbench.model, chessbench.encoding).why_not("split")


def test_an_unknown_layer_is_refused():
    evaluator = _random_chessformer("shaw")
    lens = lens_for(evaluator.model, evaluator.encoding)
    with pytest.raises(ValueError, match="out of range"):
        lens.attention_split(lens.prepare(chess.Board()), 2)
