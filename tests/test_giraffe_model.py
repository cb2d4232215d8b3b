"""The Giraffe family: grouped evaluator, two-pass move evaluator, decoding and checkpoints."""

import chess
import numpy as np
import pytest
import torch

from analysis.checkpoint import CheckpointError, load_checkpoint, load_evaluator, save_checkpoint
from analysis.encoding.giraffe import INPUT_SIZE, MAX_MOVES, encode
from analysis.encoding.giraffe.features import GLOBAL_SIZE, PIECE_SIZE
from analysis.models import get_family
from analysis.models.giraffe.config import GiraffeConfig
from analysis.models.giraffe.decoding import move_probabilities
from analysis.models.giraffe.losses import GiraffeLossWeights
from analysis.models.giraffe.move_model import rank_features
from analysis.models.inference import make_evaluator

FAMILY = get_family("giraffe")


def model(seed: int = 0):
    torch.manual_seed(seed)
    return FAMILY.build(FAMILY.preset("giraffe-2015")).eval()


def test_capabilities_value_and_policy_no_attention():
    caps = FAMILY.capabilities(FAMILY.preset("giraffe-2015"))
    assert caps.value and caps.policy and not caps.wdl and caps.attention is None
    assert FAMILY.encodings == ("giraffe-363",)


def test_first_layer_keeps_the_groups_apart():
    net = model()
    board = torch.from_numpy(encode([chess.Board()])[:, :363]).requires_grad_(True)
    first = net.evaluator.first(board)  # (1, 15 + 11 + 7)
    g = torch.autograd.grad(first[0, :15].sum(), board, retain_graph=True)[0]
    assert g[0, GLOBAL_SIZE:].abs().sum() == 0  # global units see only global features
    g = torch.autograd.grad(first[0, 15:26].sum(), board, retain_graph=True)[0]
    assert g[0, :GLOBAL_SIZE].abs().sum() == 0 and g[0, GLOBAL_SIZE + PIECE_SIZE:].abs().sum() == 0
    g = torch.autograd.grad(first[0, 26:].sum(), board)[0]
    assert g[0, :GLOBAL_SIZE + PIECE_SIZE].abs().sum() == 0


def test_outputs_and_value_range():
    boards = [chess.Board(), chess.Board("4k3/8/8/8/8/8/8/R3K3 b - - 0 1")]
    with torch.no_grad():
        out = model()(torch.from_numpy(encode(boards)))
    assert out["value"].shape == (2,) and out["policy"].shape == (2, MAX_MOVES)
    assert (out["value"].abs() < 1).all()
    assert (out["policy"][0, 20:] < -1e3).all() and (out["policy"][0, :20] > -1e3).all()
    with pytest.raises(ValueError, match="input features"):
        model()(torch.zeros(1, INPUT_SIZE - 1))


def test_rank_features_order_moves_by_first_pass():
    logits = torch.tensor([[0.1, 2.0, -1.0, 5.0]])
    exists = torch.tensor([[True, True, True, False]])
    rank = rank_features(logits, exists)
    # Ranked: move 1 (0th), move 0 (1st), move 2 (2nd) of 3 real moves; padding gets zeros.
    assert rank[0, :, 0].tolist() == pytest.approx([1 / 3, 0.0, 2 / 3, 0.0])
    assert rank[0, :, 1].tolist() == pytest.approx([1 / 20, 0.0, 2 / 20, 0.0])


def test_second_pass_sees_the_rank():
    """Changing the first pass's order changes the move evaluator's answer (the rank is an input)."""
    net = model()
    x = torch.from_numpy(encode([chess.Board()]))
    with torch.no_grad():
        base = net(x)["policy"][0, :20]
        net.move_evaluator.move_in.weight[:, -2:] += 5.0  # weight on the two rank features
        moved = net(x)["policy"][0, :20]
    assert not torch.allclose(base, moved)


def test_policy_is_normalised_over_legal_moves():
    ev = make_evaluator(model(), device="cpu")
    for board in (chess.Board(), chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")):
        e = ev.evaluate([board])[0]
        assert set(e.policy) == set(board.legal_moves)
        assert sum(e.policy.values()) == pytest.approx(1.0)
        assert 0 < e.score < 1 and e.extras["centipawns"] == pytest.approx(
            -np.log(1 / e.score - 1) / 0.00368208, abs=1)
    assert ev.evaluate([chess.Board("7k/5QQ1/8/8/8/8/8/K7 b - - 0 1")])[0].policy == {}


def test_move_probabilities_are_sigmoid_shares():
    p = move_probabilities(np.array([0.0, 0.0, np.log(3.0)]))  # sigmoids 0.5, 0.5, 0.75
    assert p.tolist() == pytest.approx([0.5 / 1.75, 0.5 / 1.75, 0.75 / 1.75])
    sharp = move_probabilities(np.array([0.0, 0.0, np.log(3.0)]), temperature=0.5)
    assert sharp[2] > p[2]


def test_losses():
    net = model()
    x = torch.from_numpy(encode([chess.Board(), chess.Board()]))
    out = net(x)
    legal = x[:, 363:].view(2, MAX_MOVES, -1)[..., 0] > 0.5
    batch = {"value": torch.tensor([1.0, -1.0]), "best": torch.tensor([0, 3]), "legal": legal}
    terms = FAMILY.losses(out, batch, GiraffeLossWeights())
    assert set(terms) == {"value", "policy", "policy_first", "total"} and terms["total"].requires_grad
    assert terms["value"].item() == pytest.approx((out["value"] - batch["value"]).abs().mean().item())
    with pytest.raises(ValueError):
        FAMILY.losses(out, {}, GiraffeLossWeights())


def test_checkpoint_round_trip_and_size_mismatch(tmp_path):
    net = model(1)
    path = save_checkpoint(tmp_path / "g.safetensors", net, trained=False, provenance={"source": "test"})
    loaded, meta = load_checkpoint(path)
    assert meta.family == "giraffe" and meta.input_encoding == "giraffe-363" and not meta.trained
    x = torch.from_numpy(encode([chess.Board()]))
    with torch.no_grad():
        assert torch.allclose(loaded(x)["value"], net(x)["value"])
    assert load_evaluator(path, device="cpu").capabilities.attention is None
    other = FAMILY.build(GiraffeConfig(hidden=32))
    bad = save_checkpoint(tmp_path / "other.safetensors", other, trained=False)
    from analysis.checkpoint import read_header, write_atomically
    meta, _ = read_header(bad)
    meta.config = GiraffeConfig().to_dict()  # header says 64, tensors hold 32
    from safetensors.torch import load_file
    write_atomically(bad, load_file(str(bad)), meta)
    with pytest.raises(CheckpointError, match="shape"):
        load_checkpoint(bad)
    with pytest.raises(ValueError, match="hidden"):
        GiraffeConfig(hidden=0)
