"""The AlphaGateau network: GATEAU against a per-edge loop, segment softmax, one network on
both board sizes, attention maps in real squares, the family through the evaluator and checkpoints."""

from __future__ import annotations

import chess
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from analysis.checkpoint import CheckpointError, load_checkpoint, load_evaluator, save_checkpoint
from analysis.encoding.graph import GRAPH_5X5, GRAPH_8X8, input_width
from analysis.encoding.graph_geometry import board_graph
from analysis.models.inference import TorchEvaluator
from analysis.models import get_family
from analysis.models.alphagateau import PRESETS, build, parameter_count
from analysis.models.alphagateau.gateau import Gateau, segment_softmax


def _random_inputs(size: int, batch: int, seed: int = 0) -> torch.Tensor:
    """Random node features and a random legal mask: the network must not care which board made them."""
    rng = np.random.default_rng(seed)
    graph = board_graph(size)
    x = rng.random((batch, input_width(size)), dtype=np.float32)
    x[:, graph.nodes * 119:] = rng.random((batch, graph.edges)) < 0.05
    return torch.from_numpy(x)


def test_segment_softmax_sums_to_one_per_node_and_matches_a_plain_softmax():
    graph = board_graph(5)
    receivers = torch.tensor(graph.receivers)
    logits = torch.randn(3, graph.edges) * 5
    alpha = segment_softmax(logits, receivers, graph.nodes)
    sums = torch.zeros(3, graph.nodes).index_add(1, receivers, alpha)
    assert torch.allclose(sums, torch.ones_like(sums), atol=1e-6)  # every square has incoming edges
    node = 12
    mask = receivers == node
    assert torch.allclose(alpha[:, mask], torch.softmax(logits[:, mask], dim=-1), atol=1e-6)


def test_gateau_layer_matches_a_naive_per_edge_loop():
    torch.manual_seed(1)
    graph = board_graph(5)
    k = 6
    layer = Gateau(k, leaky_slope=0.01)
    h, g = torch.randn(2, graph.nodes, k), torch.randn(2, graph.edges, k)
    senders, receivers = torch.tensor(graph.senders), torch.tensor(graph.receivers)
    h_new, g_new, alpha = layer(h, g, senders, receivers)
    for b in range(2):
        logits, edges_new = {}, {}
        for e, (j, i) in enumerate(zip(graph.senders.tolist(), graph.receivers.tolist())):
            edges_new[e] = layer.w_u(h[b, i]) + layer.w_e(g[b, e]) + layer.w_v(h[b, j])  # eq. 4
            logits[e] = F.leaky_relu(layer.a(edges_new[e]), 0.01)
        expected_h = layer.w_0(h[b]).clone()
        for i in range(graph.nodes):
            incoming = [e for e in range(graph.edges) if graph.receivers[e] == i]
            weights = torch.softmax(torch.cat([logits[e] for e in incoming]), dim=0)  # eq. 5
            for w, e in zip(weights, incoming):  # eq. 6
                expected_h[i] += w * (layer.w_h(h[b, graph.senders[e]]) + layer.w_g(g[b, e]))
                assert torch.isclose(alpha[b, e], w, atol=1e-5)
        assert torch.allclose(h_new[b], expected_h, atol=1e-4)
        assert torch.allclose(g_new[b], torch.stack([edges_new[e] for e in range(graph.edges)]), atol=1e-5)


def test_one_network_plays_both_board_sizes():
    torch.manual_seed(0)
    model = build(PRESETS["ag-tiny"]).eval()
    with torch.no_grad():
        small, large = model(_random_inputs(5, 3)), model(_random_inputs(8, 2))
    assert small["policy"].shape == (3, 455) and small["value"].shape == (3,)
    assert large["policy"].shape == (2, 1858) and large["value"].shape == (2,)
    assert (small["value"].abs() <= 1).all() and torch.isfinite(large["policy"]).all()
    with pytest.raises(ValueError, match="fits no board size"):
        model(torch.zeros(1, 100))


def test_batch_elements_are_independent_in_eval_mode():
    model = build(PRESETS["ag-tiny"]).eval()
    x = _random_inputs(8, 4)
    with torch.no_grad():
        together = model(x)["policy"]
        alone = model(x[2:3])["policy"]
    assert torch.allclose(together[2:3], alone, atol=1e-5)


def test_paper_presets_have_the_papers_size():
    # The paper: 5 ResGATEAU layers, width 128, "a total of 1.0M parameters".
    assert abs(parameter_count(build(PRESETS["ag-5"])) - 1.0e6) < 0.05e6
    assert parameter_count(build(PRESETS["ag-5"])) == parameter_count(build(PRESETS["ag-5"].__class__(
        blocks=5, width=128, board=5)))  # no weight depends on the board


def test_attention_maps_are_sparse_rows_in_real_squares():
    torch.manual_seed(0)
    model = build(PRESETS["ag-tiny"])
    evaluator = TorchEvaluator(model, device="cpu", encoding=GRAPH_8X8.name)
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 2")
    [evaluation] = evaluator.evaluate([board], attention=True)
    maps = evaluation.attention
    assert maps.shape == (2, 1, 64, 64)
    assert np.allclose(maps.sum(-1), 1, atol=1e-5)  # every square hears from somewhere
    # Real squares (black to move, so the frame was mirrored back): a5 hears from c6 (a knight
    # step) and a4 (a line), never from h1, which has no edge to it.
    assert maps[:, 0, chess.A5, chess.C6].min() > 0 and maps[:, 0, chess.A5, chess.A4].min() > 0
    assert maps[:, 0, chess.A5, chess.H1].max() == 0
    assert (maps[:, 0, chess.A5] > 0).sum(-1).tolist() == [21 + 4] * 2  # 3 queen lines of 7, 4 knight squares
    assert sum(evaluation.policy.values()) == pytest.approx(1.0)
    assert set(evaluation.policy) == set(board.legal_moves)


def test_gardner_network_refuses_8x8_positions_and_maps_5x5_attention(tmp_path):
    from analysis.gardner import GardnerBoard

    family = get_family("alphagateau")
    model = build(PRESETS["ag-tiny"].__class__(blocks=1, width=16, board=5))
    path = save_checkpoint(tmp_path / "g.safetensors", model, trained=False)
    evaluator = load_evaluator(path, device="cpu")
    assert evaluator.encoding.name == GRAPH_5X5.name == family.encoding_of(model.config)
    with pytest.raises(ValueError, match="8x8 position given to the 5x5"):
        evaluator.evaluate([chess.Board()])
    [evaluation] = evaluator.evaluate([GardnerBoard()], attention=True)
    assert set(evaluation.policy) == set(GardnerBoard().legal_moves)
    maps = evaluation.attention
    assert np.allclose(maps[:, :, chess.E5].sum(-1), 1) and maps[:, :, chess.F6].sum() == 0  # off the board


def test_a_checkpoint_whose_edge_set_is_not_its_boards_is_refused(tmp_path):
    from analysis.checkpoint import read_header, rewrite_metadata

    model = build(PRESETS["ag-tiny"])
    path = save_checkpoint(tmp_path / "a.safetensors", model, trained=False)
    meta, _ = read_header(path)
    meta.input_encoding = GRAPH_5X5.name
    rewrite_metadata(path, meta)
    with pytest.raises(CheckpointError, match="does not match the config"):
        load_checkpoint(path)


def test_a_gardner_network_moves_to_8x8_with_its_weights_and_its_training_boards(tmp_path):
    from analysis.train.alphagateau_transfer import on_board

    torch.manual_seed(0)
    gardner = build(PRESETS["ag-tiny"].__class__(blocks=1, width=16, board=5))
    path = save_checkpoint(tmp_path / "g.safetensors", gardner, trained=True, provenance={"board_sizes": [5]})
    moved = on_board(path, 8, tmp_path / "g8.safetensors")
    model, meta = load_checkpoint(moved)
    assert model.config.board == 8 and meta.input_encoding == GRAPH_8X8.name and meta.provenance["board_sizes"] == [5]
    x = _random_inputs(8, 2)
    with torch.no_grad():
        assert torch.equal(model.eval()(x)["policy"], gardner.eval()(x)["policy"])


def test_registering_a_gardner_only_network_is_a_clear_checkpoint_error(tmp_path):
    from analysis.checkpoint.probe import probe_network

    model = build(PRESETS["ag-tiny"].__class__(blocks=1, width=16, board=5))
    path = save_checkpoint(tmp_path / "g.safetensors", model, trained=False)
    loaded, meta = load_checkpoint(path)
    with pytest.raises(CheckpointError, match="does not play 8x8 chess"):
        probe_network(loaded, meta, "g.safetensors")
    probe_network(*load_checkpoint(save_checkpoint(tmp_path / "c.safetensors", build(PRESETS["ag-tiny"]),
                                                   trained=False)), "c.safetensors")  # 8x8 passes
