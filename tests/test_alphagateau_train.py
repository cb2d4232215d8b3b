"""AlphaGateau supervised training through the shared trainer: the graph dataset's targets on
hand-checked rows, its augmentations (history dropout and colour flips, exact against the
encoding of the FEN and of the mirrored board), a few steps that learn, bf16 autocast, and a
Gardner network initialising an 8x8 run (the transfer experiment)."""

from __future__ import annotations

import json
import math

import chess
import numpy as np
import pyarrow as pa
import pytest
import torch

from analysis.checkpoint import load_checkpoint, save_checkpoint
from analysis.data.store import ANNOTATED_SCHEMA, read_annotated, shard_path, write_table_atomic
from analysis.encoding import legal_move_indices, move_to_index, pack
from analysis.encoding.graph import (BLACK_TO_MOVE, GRAPH_8X8, HISTORY_FEATURES, NODE_FEATURES, PLY_COUNT,
                                     encode_graphs)
from analysis.encoding.graph_geometry import board_graph, move_to_edge, node_of_square
from analysis.eval.value_sanity import mirrored
from analysis.models import get_family
from analysis.models.alphagateau import PRESETS, AlphaGateauConfig, build
from analysis.models.alphagateau.data import GraphDataset, board_of_row
from analysis.train.config import TrainConfig
from analysis.train.loop import train, training_dataset
from tests.annotated_fixture import annotated_row, write_fixture_dataset

PROMOTING = "4k3/1P6/8/8/8/8/8/4K3 w - - 0 1"
BLACK_PROMOTING = "4k3/8/8/8/8/8/6p1/4K3 b - - 3 40"


def _row(fen: str, win: float, best: str, actions: dict[str, float] | None) -> dict:
    board = chess.Board(fen)
    packed = pack(board)
    _, legal = legal_move_indices(board)
    index = {uci: move_to_index(board, chess.Move.from_uci(uci)) for uci in [best, *(actions or {})]}
    return {"fen": fen, "history_fen": fen, "history_moves": "", "game_id": fen, "ply": 0, "source": "pgn",
            "split": "train", "priority": 0.0, "planes": packed.bits.astype("<u8").tobytes(),
            "rule50": packed.rule50, "win": win, "cp": 0, "mate": None, "wdl": [win, 0.0, 1 - win],
            "best_move": best, "best_index": index[best], "legal_indices": legal.tolist(),
            "action_indices": [index[m] for m in actions] if actions else None,
            "action_win": list(actions.values()) if actions else None}


@pytest.fixture(scope="module")
def fixture_data(tmp_path_factory):
    return write_fixture_dataset(tmp_path_factory.mktemp("ag-data"), games=8, plies=32)


def test_targets_on_hand_checked_rows(tmp_path):
    rows = [_row(PROMOTING, 0.75, "b7b8q", {"b7b8q": 0.9, "b7b8n": 0.5}),
            _row(BLACK_PROMOTING, 0.25, "g2g1r", None)]
    write_table_atomic(pa.Table.from_pylist(rows, schema=ANNOTATED_SCHEMA), shard_path(tmp_path, 0))
    data = GraphDataset([tmp_path], "train", PRESETS["ag-tiny"], policy_temperature=0.1)
    batch = data[np.arange(2)]
    boards = [chess.Board(PROMOTING), chess.Board(BLACK_PROMOTING)]
    # The inputs are the graph encoding's, the fractional node features (ply, no-progress) exact.
    torch.testing.assert_close(batch["tokens"], torch.from_numpy(encode_graphs(boards, 8)), rtol=0, atol=0)
    assert batch["value"].tolist() == [0.5, -0.5]  # 2 * win - 1
    # Row 0: softmax(win / 0.1) over the two annotated moves = (e^9, e^5) / (e^9 + e^5).
    queen = move_to_edge(8, boards[0], chess.Move.from_uci("b7b8q"))
    knight = move_to_edge(8, boards[0], chess.Move.from_uci("b7b8n"))
    graph = board_graph(8)
    assert graph.promotions[queen] == 0 and graph.promotions[knight] == chess.KNIGHT  # plain edge = queen
    expected = 1 / (1 + math.exp(-4))
    assert batch["policy"][0, queen].item() == pytest.approx(expected, rel=1e-6)
    assert batch["policy"][0, knight].item() == pytest.approx(1 - expected, rel=1e-5)
    assert batch["policy"][0].sum().item() == pytest.approx(1.0)
    # Row 1 (no multipv, black to move): one-hot on g2g1=R, which is g7 -> g8 in the mover's frame.
    (edge,) = torch.nonzero(batch["policy"][1]).flatten().tolist()
    assert batch["policy"][1, edge] == 1.0
    assert (graph.senders[edge], graph.receivers[edge], graph.promotions[edge]) == (
        node_of_square(8, chess.G2, chess.BLACK), node_of_square(8, chess.G1, chess.BLACK), chess.ROOK)
    assert node_of_square(8, chess.G2, chess.BLACK) == chess.G7
    # The legal mask is the legal moves' edges.
    for row, board in enumerate(boards):
        legal = sorted(move_to_edge(8, board, m) for m in board.legal_moves)
        assert torch.nonzero(batch["legal"][row]).flatten().tolist() == legal


def test_a_gardner_config_is_refused_with_the_fix(fixture_data):
    with pytest.raises(ValueError, match="board = 8"):
        GraphDataset([fixture_data], "train", AlphaGateauConfig(blocks=1, width=16, board=5))


def _train_rows(root) -> list[dict]:
    return read_annotated(root, split="train").to_pylist()


def _all_rows(data: GraphDataset) -> torch.Tensor:
    return data[np.arange(len(data))]["tokens"]


def _as_pasted(boards: list[chess.Board]) -> torch.Tensor:
    """The evaluator's inputs for these boards (``analysis.models.inference`` calls ``network_inputs``)."""
    config = PRESETS["ag-tiny"]
    return torch.from_numpy(get_family("alphagateau").network_inputs(boards, GRAPH_8X8, config))


def _nodes(tokens: torch.Tensor) -> torch.Tensor:
    return tokens[:, :64 * NODE_FEATURES].reshape(len(tokens), 64, NODE_FEATURES)


def _node_columns_that_differ(a: torch.Tensor, b: torch.Tensor) -> set[int]:
    cut = 64 * NODE_FEATURES
    assert torch.equal(a[:, cut:], b[:, cut:])  # the legal edges never change
    return {int(c) % NODE_FEATURES for c in torch.nonzero(a[:, :cut] != b[:, :cut])[:, 1]}


def test_without_dropout_rows_carry_their_history(fixture_data):
    rows = _train_rows(fixture_data)
    tokens = _all_rows(GraphDataset([fixture_data], "train", PRESETS["ag-tiny"], fen_only_share=0.0, seed=1))
    with_history = torch.from_numpy(encode_graphs([board_of_row(r) for r in rows], 8))
    torch.testing.assert_close(tokens, with_history, rtol=0, atol=0)
    pasted = _as_pasted([chess.Board(r["fen"]) for r in rows])
    assert sum(not torch.equal(t, p) for t, p in zip(tokens, pasted)) > 0.9 * len(rows)  # history shows


def test_fen_only_rows_are_what_the_evaluator_sees_for_a_pasted_fen(fixture_data):
    rows = _train_rows(fixture_data)
    data = GraphDataset([fixture_data], "train", PRESETS["ag-tiny"], fen_only_share=1.0, seed=1)
    torch.testing.assert_close(_all_rows(data), _as_pasted([chess.Board(r["fen"]) for r in rows]), rtol=0, atol=0)


def test_a_repetition_is_history_a_pasted_fen_lacks(tmp_path):
    board = chess.Board()
    for uci in ("g1f3", "g8f6", "f3g1", "f6g8"):  # the start position again: "occurred once before"
        board.push_uci(uci)
    row = annotated_row(board, 0, 4, "train", multipv=False)
    write_table_atomic(pa.Table.from_pylist([row], schema=ANNOTATED_SCHEMA), shard_path(tmp_path, 0))
    with_history = GraphDataset([tmp_path], "train", PRESETS["ag-tiny"])[np.arange(1)]["tokens"]
    assert _nodes(with_history)[0, :, 12].all()  # step 0's first repetition flag, on every node
    fen_only = GraphDataset([tmp_path], "train", PRESETS["ag-tiny"], fen_only_share=1.0)[np.arange(1)]["tokens"]
    torch.testing.assert_close(fen_only, _as_pasted([chess.Board(board.fen())]), rtol=0, atol=0)


def test_a_colour_flip_is_the_mirrored_position(fixture_data):
    rows = _train_rows(fixture_data)
    config = PRESETS["ag-tiny"]
    plain = _all_rows(GraphDataset([fixture_data], "train", config))
    flipped = _all_rows(GraphDataset([fixture_data], "train", config, colour_flip_share=1.0))
    # Only the colour flag (on every node) and the ply count (one ply: Board.mirror keeps the move number).
    assert _node_columns_that_differ(plain, flipped) == {BLACK_TO_MOVE, PLY_COUNT}
    assert torch.equal(_nodes(flipped)[:, :, BLACK_TO_MOVE], 1 - _nodes(plain)[:, :, BLACK_TO_MOVE])
    torch.testing.assert_close((_nodes(flipped) - _nodes(plain))[:, :, PLY_COUNT].abs() * 512,
                               torch.ones(len(rows), 64))
    # With its history, the row is the game played mirrored move by move, but for that game's ply count.
    games = _as_pasted([mirrored(board_of_row(r)) for r in rows])
    assert _node_columns_that_differ(flipped, games) <= {PLY_COUNT}
    # From its FEN alone, it is exactly the evaluator's input for Board.mirror() of the FEN.
    both = GraphDataset([fixture_data], "train", config, fen_only_share=1.0, colour_flip_share=1.0)
    torch.testing.assert_close(_all_rows(both), _as_pasted([chess.Board(r["fen"]).mirror() for r in rows]),
                               rtol=0, atol=0)


def test_augmentations_are_drawn_for_each_batch_at_their_shares(fixture_data):
    config = PRESETS["ag-tiny"]
    plain = GraphDataset([fixture_data], "train", config)
    data = GraphDataset([fixture_data], "train", config, fen_only_share=0.2, colour_flip_share=0.5, seed=3)
    rng = np.random.default_rng(0)
    fen_only = flipped = shown = with_history = 0
    for _ in range(60):
        idx = rng.permutation(len(data))[:32]
        batch, reference = _nodes(data[idx]["tokens"]), _nodes(plain[idx]["tokens"])
        assert torch.equal(batch, _nodes(data[idx]["tokens"]))  # the same rows in the same order: the same draw
        flipped += int((batch[:, 0, BLACK_TO_MOVE] != reference[:, 0, BLACK_TO_MOVE]).sum())
        history = reference[:, :, HISTORY_FEATURES].flatten(1).any(1)
        fen_only += int((history & ~batch[:, :, HISTORY_FEATURES].flatten(1).any(1)).sum())
        with_history += int(history.sum())
        shown += len(idx)
    assert abs(flipped / shown - 0.5) < 0.05 and abs(fen_only / with_history - 0.2) < 0.05
    idx = np.arange(32)
    assert not torch.equal(data[idx]["tokens"], data[idx[::-1]]["tokens"].flip(0))  # another batch, another draw


@pytest.mark.parametrize("shares", [{"fen_only_share": 1.5}, {"colour_flip_share": -0.1}])
def test_shares_outside_zero_to_one_are_refused(fixture_data, shares):
    with pytest.raises(ValueError, match=f"{next(iter(shares))} must be in \\[0, 1\\]"):
        GraphDataset([fixture_data], "train", PRESETS["ag-tiny"], **shares)


def _config(data, out, **kw) -> TrainConfig:
    base = dict(data=data, out=out, family="alphagateau", model="ag-tiny", steps=30, batch_size=32,
                optimizer="adam", betas=(0.9, 0.999), eps=1e-8, lr_steps=[[0, 3e-3]], swa_start=0, swa_every=1,
                ema_decay=0.9, val_every=10, checkpoint_every=30, log_every=1, num_workers=0, seed=0,
                policy_temperature=0.05)
    base.update(kw)
    return TrainConfig(**base)


def test_a_tiny_network_learns_through_the_shared_trainer(fixture_data, tmp_path):
    path = train(_config(fixture_data, tmp_path / "run"), progress=False)
    history = json.loads((tmp_path / "run" / "history.json").read_text())
    losses = [row["total"] for row in history["train"]]
    assert len(losses) == 30 and np.mean(losses[-5:]) < 0.8 * np.mean(losses[:5])
    assert {"policy", "value", "policy_top1"} <= set(history["val"][-1])
    model, meta = load_checkpoint(path)
    assert meta.family == "alphagateau" and meta.trained and meta.provenance["board_sizes"] == [8]


def test_bf16_autocast_trains_with_finite_losses_and_the_augmentations(fixture_data, tmp_path):
    """The segment softmax and attention pooling run in float32 inside bf16 autocast; the run's
    shares reach the training rows and not the held-out ones."""
    cfg = _config(fixture_data, tmp_path / "bf16", steps=4, amp="on", fen_only_share=0.2, colour_flip_share=0.5)
    family = get_family("alphagateau")
    train_set = training_dataset(family, cfg, "train", PRESETS["ag-tiny"])
    test_set = training_dataset(family, cfg, "test", PRESETS["ag-tiny"])
    assert (train_set.fen_only_share, train_set.colour_flip_share) == (0.2, 0.5)
    assert (test_set.fen_only_share, test_set.colour_flip_share) == (0.0, 0.0)
    path = train(cfg, progress=False)
    history = json.loads((tmp_path / "bf16" / "history.json").read_text())
    assert all(math.isfinite(row["total"]) for row in history["train"])
    provenance = load_checkpoint(path)[1].provenance
    assert provenance["amp_bf16"] is True and provenance["fen_only_share"] == 0.2


def test_a_gardner_network_initialises_an_8x8_run(fixture_data, tmp_path):
    torch.manual_seed(0)
    gardner = build(AlphaGateauConfig(blocks=1, width=16, board=5))
    source = save_checkpoint(tmp_path / "g.safetensors", gardner, trained=True, provenance={"board_sizes": [5]})
    cfg = _config(fixture_data, tmp_path / "ft", steps=1, lr_steps=[[0, 0.0]], init_from=source)
    model, meta = load_checkpoint(train(cfg, progress=False))
    assert model.config.board == 8 and meta.provenance["board_sizes"] == [5, 8]
    assert meta.provenance["init_from"]["config"]["board"] == 5
    for name, tensor in gardner.state_dict().items():
        if not name.endswith(("running_mean", "running_var")):  # one training step's batch statistics
            torch.testing.assert_close(model.state_dict()[name], tensor)  # lr 0: the source's weights
    wider = _config(fixture_data, tmp_path / "bad", steps=1, init_from=source, model_overrides={"width": 32})
    with pytest.raises(ValueError, match="differs from the run"):
        train(wider, progress=False)
