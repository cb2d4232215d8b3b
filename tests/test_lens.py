"""The lens on Chessformer (Post-LN, DeepNorm) and ChessBench (Pre-LN, non-square tokens): exact
decompositions, scale 1 is the clean forward, the last readout is the network's output, and a
scaled unit equals the network with that unit's output weights scaled (an independent reference)."""

from __future__ import annotations

import copy

import chess
import numpy as np
import pytest
import torch

from analysis.checkpoint import load_evaluator
from analysis.lens import LensError, LensUnavailable, lens_for
from analysis.lens import core
from analysis.models import get_family
from analysis.models.inference import make_evaluator
from tests.conftest import ROOT

FENS = [
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "r3k2r/ppp2ppp/2n1bn2/3qp3/3P4/2N1BN2/PPP1QPPP/R3K2R b KQkq - 4 9",  # Black to move: real UCI, not mirrored
    "8/P5k1/8/8/8/8/6K1/8 w - - 0 1",  # promotions
]


def _random(family: str, **config):
    torch.manual_seed(0)
    fam = get_family(family)
    model = fam.build(fam.config(config)).eval()
    return make_evaluator(model, device="cpu")


NETWORKS = {
    "cf-small": lambda: load_evaluator(ROOT / "weights" / "cf-small.safetensors", device="cpu"),
    "cb-cpu": lambda: load_evaluator(ROOT / "weights" / "retired" / "cb-cpu.safetensors", device="cpu"),
    "cf-shaw": lambda: _random("chessformer", layers=2, embed=32, heads=4, ffn=48, position="shaw",
                               value_channels=4, value_embed=8, reward_buckets=4),
    "cf-absolute": lambda: _random("chessformer", layers=2, embed=32, heads=4, ffn=48, position="absolute",
                                   value_channels=4, value_embed=8, reward_buckets=4),
    "cb-bc": lambda: _random("chessbench", head="behavioural_cloning", layers=2, embed=32, heads=4, vocab=1968),
    "cb-sv": lambda: _random("chessbench", head="state_value", layers=2, embed=32, heads=4, vocab=1968, bins=16),
}


@pytest.fixture(scope="module", params=sorted(NETWORKS))
def net(request):
    evaluator = NETWORKS[request.param]()
    return evaluator, lens_for(evaluator.model, evaluator.encoding)


def _out_weights(model, kind: str, layer: int) -> torch.Tensor:
    """The weight whose columns are the units' writes (the independent reference scales them)."""
    if model.family == "chessformer":
        block = model.layers[layer]
        return block.attention.out.weight if kind == "head" else block.ffn[2].weight
    block = model.blocks[layer]
    return block.attention.out.weight if kind == "head" else block.ffn.down.weight


def _reference(evaluator, adapter, board, kind, layer, index, scale):
    """The network with unit (layer, index)'s output columns times ``scale``, read as the lens reads."""
    model = copy.deepcopy(evaluator.model)
    width = model.config.head_dim if kind == "head" else 1
    with torch.no_grad():
        _out_weights(model, kind, layer)[:, index * width:(index + 1) * width] *= scale
    other = type(adapter)(model, adapter.encoding)
    with torch.no_grad():
        return other.run(other.prepare(board))[1]


def _close(a, b, tol=1e-4):
    if a is None or b is None:
        assert a is None and b is None
        return
    assert torch.allclose(a, b, atol=tol, rtol=tol), (a - b).abs().max()


@pytest.mark.parametrize("fen", FENS)
def test_head_writes_sum_to_the_attention_output(net, fen):
    _, adapter = net
    prepared = adapter.prepare(chess.Board(fen))
    for layer in range(adapter.units["head"].layers):
        writes, bias, output = adapter.head_writes(prepared, layer)
        total = writes.sum(0) + (0 if bias is None else bias)
        assert writes.shape[0] == adapter.units["head"].per_layer
        assert torch.allclose(total, output, atol=1e-5), (total - output).abs().max()


@pytest.mark.parametrize("fen", FENS)
def test_scale_one_is_the_clean_forward_and_last_readout_is_the_output(net, fen):
    evaluator, adapter = net
    board = chess.Board(fen)
    prepared = adapter.prepare(board)
    ones = {kind: core.unit_scales(adapter, kind, 3) for kind in adapter.units}
    with torch.no_grad():
        residuals, clean = adapter.run(prepared, capture=True)
        _, scaled = adapter.run(prepared, 3, ones)
        last = adapter.unembed(prepared, residuals[-1], adapter.readouts[-1])
    assert len(residuals) == len(adapter.readouts)
    for got in (scaled, last):
        _close(got.logits, None if clean.logits is None else clean.logits.expand_as(got.logits))
        _close(got.score, None if clean.score is None else clean.score.expand_as(got.score))
    evaluation = evaluator.evaluate([board])[0]
    if clean.logits is not None:
        policy = clean.logits[0].softmax(-1).numpy()
        expected = np.array([evaluation.policy[m] for m in prepared.moves])
        np.testing.assert_allclose(policy, expected, atol=1e-5)
    if clean.score is not None:
        assert abs(float(clean.score[0]) - evaluation.score) < 1e-5


def test_the_logit_lens_reads_every_point_and_ends_at_the_output(net):
    evaluator, adapter = net
    board = chess.Board(FENS[1])
    view = core.logit_lens(adapter, board)
    evaluation = evaluator.evaluate([board])[0]
    assert view.readouts == list(adapter.readouts) and view.readouts[0] == "embed"
    if view.probs is not None:
        assert view.probs.shape == (len(view.readouts), len(view.moves))
        np.testing.assert_allclose(view.probs[-1], [evaluation.policy[chess.Move.from_uci(m)] for m in view.moves],
                                   atol=1e-5)
        assert view.top()[-1] == evaluation.best_move().uci()
        assert (view.ranks.min(1) == 1).all()
        assert set(view.moves) == {m.uci() for m in board.legal_moves}  # real UCI, Black's own squares
    if view.score is not None:
        assert abs(view.score[-1] - evaluation.score) < 1e-5


@pytest.mark.parametrize("kind,scale", [("head", 0.0), ("head", 2.0), ("head", -1.0), ("mlp", 0.0), ("mlp", 3.0)])
def test_a_scaled_unit_equals_the_network_with_its_write_scaled(net, kind, scale):
    evaluator, adapter = net
    board = chess.Board(FENS[0])
    units = adapter.units[kind]
    layer, index = units.layers - 1, units.per_layer // 2
    ablation = core.ablate(adapter, board, kind, layer, index, scale)
    reference = _reference(evaluator, adapter, board, kind, layer, index, scale)
    if reference.logits is not None:
        np.testing.assert_allclose(ablation.scaled, reference.logits[0].softmax(-1).numpy(), atol=1e-5)
    if reference.score is not None:
        assert abs(ablation.scaled_score - float(reference.score[0])) < 1e-5


def test_the_exact_grid_is_each_head_ablated_alone(net):
    evaluator, adapter = net
    if not adapter.has("policy"):
        with pytest.raises(LensUnavailable):
            core.grid(adapter, chess.Board(FENS[0]), "e1g1")
        return
    board = chess.Board(FENS[0])
    move = "f1b5"
    grid = core.grid(adapter, board, move, max_variants=5)  # several chunks
    column = [m.uci() for m in board.legal_moves].index(move)
    assert grid.exact.all()
    for layer, head in [(0, 0), (grid.logit.shape[0] - 1, grid.logit.shape[1] - 1)]:
        ref = _reference(evaluator, adapter, board, "head", layer, head, 0.0)
        assert abs(grid.logit[layer, head] - (float(ref.logits[0, column]) - grid.clean_logit)) < 1e-3
        if grid.score is not None:
            assert abs(grid.score[layer, head] - (float(ref.score[0]) - grid.clean_score)) < 1e-5


def test_attribution_is_the_derivative_and_its_top_heads_are_measured_exactly(net):
    _, adapter = net
    if not adapter.has("policy"):
        return
    board = chess.Board(FENS[0])
    exact = core.grid(adapter, board, "f1b5")
    ranked = core.grid(adapter, board, "f1b5", top=3)
    assert ranked.exact.sum() == 3
    np.testing.assert_allclose(ranked.logit[ranked.exact], exact.logit[ranked.exact], atol=1e-4)
    picked = np.abs(ranked.attribution)[ranked.exact].min()
    assert (np.abs(ranked.attribution)[~ranked.exact] <= picked + 1e-9).all()
    # the estimate is -d(logit)/d(scale) at 1: a central difference of two exact passes agrees
    prepared = adapter.prepare(board)
    column = [m.uci() for m in prepared.moves].index("f1b5")
    scales = core.unit_scales(adapter, "head", 2).double().float()
    eps = 1e-2
    scales[0, 0, 1], scales[1, 0, 1] = 1 + eps, 1 - eps
    with torch.no_grad():
        _, out = adapter.run(prepared, 2, {"head": scales})
    slope = float(out.logits[0, column] - out.logits[1, column]) / (2 * eps)
    assert abs(-slope - ranked.attribution[0, 1]) < 1e-2 * max(1.0, abs(slope))


def test_bad_requests_are_refused_before_anything_runs(net):
    _, adapter = net
    board = chess.Board(FENS[0])
    with pytest.raises(LensError, match="out of range"):
        core.check_unit(adapter, "head", adapter.units["head"].layers, 0)
    with pytest.raises(LensError, match="out of range"):
        core.check_unit(adapter, "mlp", 0, adapter.units["mlp"].per_layer)
    with pytest.raises(LensError, match="outside"):
        core.ablate(adapter, board, "head", 0, 0, 4.5)
    with pytest.raises(LensError, match="readout"):
        core.check_readout(adapter, "99.mlp")
    prepared = core.prepare(adapter, board)
    with pytest.raises(LensError, match="not a legal move"):
        core.move_index(prepared, "e1e8")
    with pytest.raises(LensError, match="not a UCI move"):
        core.move_index(prepared, "castle")
    with pytest.raises(LensError, match="no legal moves"):
        core.prepare(adapter, chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"))


def test_the_causal_atlas_is_the_mean_of_single_head_ablations(net):
    from analysis.lens.atlas import causal_atlas

    _, adapter = net
    boards = [chess.Board(fen) for fen in FENS[:2]] + [chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")]
    atlas = causal_atlas(adapter, boards, max_variants=7)
    assert atlas.positions == 2  # the stalemate is skipped
    layers, heads = adapter.units["head"].layers, adapter.units["head"].per_layer
    for layer, head in [(0, 0), (layers - 1, heads - 1)]:
        kls, changes = [], []
        for board in boards[:2]:
            a = core.ablate(adapter, board, "head", layer, head, 0.0)
            if a.clean is not None:
                kls.append(float((a.clean * (np.log(a.clean) - np.log(a.scaled))).sum()))
            if a.clean_score is not None:
                changes.append(abs(a.scaled_score - a.clean_score))
        if kls:
            assert abs(atlas.kl[layer, head] - np.mean(kls)) < 1e-5
        else:
            assert atlas.kl is None
        if changes:
            assert abs(atlas.score[layer, head] - np.mean(changes)) < 1e-6
        else:
            assert atlas.score is None


def test_a_head_that_changes_nothing_has_a_kl_of_zero_not_rounding_noise():
    from analysis.lens.atlas import _kl

    clean = torch.tensor([[0.3, -1.2, 2.5, 0.0]])
    same = clean.repeat(3, 1) + torch.tensor([[0.0], [1e-7], [-1e-7]])  # a shift leaves the softmax as it is
    assert (_kl(clean[0], same) >= 0).all() and float(_kl(clean[0], same).max()) < 1e-6
