"""The ChessBench family: exact parameter counts, the forward pass as the reference computes it,
decoding (values from bins, action values, policies), attention in real squares, checkpoints."""

import json
import math

import chess
import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from analysis.checkpoint import CheckpointError, load_checkpoint, load_evaluator, save_checkpoint
from analysis.encoding import get_encoding
from analysis.encoding.chessbench import NAME as ENCODING
from analysis.evaluator import NoActionValues
from analysis.models.inference import TorchEvaluator
from analysis.models import get_family
from analysis.models.chessbench import PRESETS, ChessBenchConfig, build, parameter_count
from analysis.models.chessbench.decoding import POLICY_TEMPERATURE

FAMILY = get_family("chessbench")
ITALIAN = "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3"


@pytest.mark.parametrize("name,count", [("cb-9m", 8_954_240), ("cb-136m", 136_479_872), ("cb-270m", 270_730_368)])
def test_reference_parameter_counts(name, count):
    with torch.device("meta"):  # no memory, no time
        model = build(PRESETS[name])
    assert sum(p.numel() for p in model.parameters()) == parameter_count(PRESETS[name]) == count


def _evaluator(head="action_value", seed=0, **overrides):
    torch.manual_seed(seed)
    config = FAMILY.preset("cb-tiny", head=head, **overrides)
    return TorchEvaluator(build(config), device="cpu", encoding=ENCODING)


def _reference_forward(model, tokens: torch.Tensor) -> torch.Tensor:
    """The reference's transformer_decoder written out op by op: shift right, embed x sqrt(D)
    plus positions, pre-LN blocks, final LN, head at the last position, log_softmax."""
    c = model.config
    x = torch.cat([torch.zeros(len(tokens), 1, dtype=torch.long), tokens], 1)
    h = model.token_embed.weight[x] * math.sqrt(c.embed) + model.position_embed.weight[: x.shape[1]]

    def ln(v, norm):
        mu, var = v.mean(-1, keepdim=True), v.var(-1, unbiased=False, keepdim=True)
        return (v - mu) / torch.sqrt(var + 1e-5) * norm.weight + norm.bias

    for block in model.blocks:
        a = ln(h, block.norm1)
        B, T, D = a.shape
        q, k, v = (a @ w.weight.T for w in (block.attention.q, block.attention.k, block.attention.v))
        split = lambda t: t.view(B, T, c.heads, D // c.heads).transpose(1, 2)  # noqa: E731
        w = torch.softmax(split(q) @ split(k).transpose(-1, -2) / math.sqrt(D // c.heads), -1)
        h = h + (w @ split(v)).transpose(1, 2).reshape(B, T, D) @ block.attention.out.weight.T
        m = ln(h, block.norm2)
        h = h + (torch.nn.functional.silu(m @ block.ffn.gate.weight.T) * (m @ block.ffn.up.weight.T)) @ block.ffn.down.weight.T
    return torch.log_softmax(ln(h[:, -1], model.final_norm) @ model.head.weight.T + model.head.bias, -1)


@pytest.mark.parametrize("head", ["action_value", "state_value", "behavioural_cloning"])
def test_forward_matches_the_reference_computation(head):
    evaluator = _evaluator(head)
    board = chess.Board(ITALIAN)
    rows = torch.from_numpy(FAMILY.network_inputs([board], evaluator.encoding, evaluator.model.config))
    assert rows.shape == ((len(list(board.legal_moves)), 78) if head == "action_value" else (1, 77))
    with torch.no_grad():
        ours = evaluator.model(rows, need_attention=True)
        quick = evaluator.model(rows)
    (key,) = quick
    torch.testing.assert_close(torch.log_softmax(ours[key], -1), _reference_forward(evaluator.model, rows),
                               atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(ours[key], quick[key], atol=1e-5, rtol=1e-5)  # SDPA path = explicit path
    T = 79 if head == "action_value" else 78
    assert ours["attention"].shape == (len(rows), 2, 4, T, T)


def test_action_values_decode_to_values_and_a_policy():
    evaluator = _evaluator()
    boards = [chess.Board(), chess.Board(ITALIAN), chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")]  # stalemate
    evaluations = evaluator.evaluate(boards)
    actions = evaluator.evaluate_actions(boards)
    assert evaluator.capabilities.action_values and not evaluator.capabilities.wdl
    for board, ev, values in zip(boards[:2], evaluations, actions):
        assert set(values) == set(board.legal_moves) and all(0 < v < 1 for v in values.values())
        assert ev.score == pytest.approx(max(values.values()))
        wins = np.array([values[m] for m in ev.policy])
        expected = np.exp((wins - wins.max()) / POLICY_TEMPERATURE)
        np.testing.assert_allclose(list(ev.policy.values()), expected / expected.sum(), rtol=1e-6)
    assert actions[2] == {} and evaluations[2].score == 0.5 and evaluations[2].policy == {}
    # Each move's value is what its own row alone gives: one batch, no cross-talk.
    alone = evaluator.evaluate_actions([boards[1]])[0]
    for move, value in alone.items():
        assert value == pytest.approx(actions[1][move], abs=1e-6)


def test_state_value_and_cloning_heads():
    sv, bc = _evaluator("state_value"), _evaluator("behavioural_cloning")
    board = chess.Board(ITALIAN)
    ev = sv.evaluate([board])[0]
    assert 0 < ev.score < 1 and ev.policy == {} and not sv.capabilities.policy and sv.capabilities.value
    with pytest.raises(NoActionValues):
        sv.evaluate_actions([board])
    ev = bc.evaluate([board])[0]
    assert set(ev.policy) == set(board.legal_moves) and sum(ev.policy.values()) == pytest.approx(1)
    assert bc.capabilities.policy and not bc.capabilities.value and ev.score == 0.5


@pytest.mark.parametrize("head", ["action_value", "state_value"])
def test_attention_is_in_real_squares(head):
    evaluator = _evaluator(head)
    board = chess.Board(ITALIAN)  # black to move: the board is still not flipped
    ev = evaluator.evaluate([board], attention=True)[0]
    rows = torch.from_numpy(FAMILY.network_inputs([board], evaluator.encoding, evaluator.model.config))
    with torch.no_grad():
        raw = evaluator.model(rows, need_attention=True)["attention"].mean(0).numpy()  # (L, H, T, T)
    assert ev.attention.shape == (2, 4, 64, 64)
    # FEN order is rank 8 first, after BOS and the side-to-move token: square s sits at 2 + (s ^ 56).
    for a, b in [(chess.E1, chess.C4), (chess.A8, chess.H1), (chess.C6, chess.E5)]:
        assert ev.attention[1, 3, a, b] == pytest.approx(raw[1, 3, 2 + (a ^ 56), 2 + (b ^ 56)], rel=1e-5)
    tokens = rows[0].numpy()
    assert tokens[1 + (chess.C4 ^ 56)] == 24 and tokens[1 + (chess.C6 ^ 56)] == 19  # B on c4, n on c6


def test_checkpoint_round_trip(tmp_path):
    evaluator = _evaluator(seed=3)
    path = save_checkpoint(tmp_path / "cb.safetensors", evaluator.model, trained=False)
    loaded = load_evaluator(path, device="cpu")
    assert loaded.meta.family == "chessbench" and loaded.meta.input_encoding == ENCODING
    assert loaded.meta.trained is False and loaded.capabilities == evaluator.capabilities
    board = chess.Board(ITALIAN)
    assert loaded.evaluate_actions([board]) == evaluator.evaluate_actions([board])


def _rewrite(path, out, *, metadata=None, tensors=None):
    model, meta = load_checkpoint(path)
    state = {k: v.contiguous() for k, v in model.state_dict().items()} | (tensors or {})
    save_file(state, str(out), metadata=meta.to_header() | (metadata or {}))
    return out


@pytest.fixture()
def saved(tmp_path):
    return save_checkpoint(tmp_path / "cb.safetensors", _evaluator().model, trained=True)


def test_an_encoding_the_family_does_not_take(saved, tmp_path):
    bad = _rewrite(saved, tmp_path / "enc.safetensors", metadata={"input_encoding": "lc0/INPUT_CLASSICAL_112_PLANE"})
    with pytest.raises(CheckpointError, match="'lc0/INPUT_CLASSICAL_112_PLANE' is not one chessbench accepts"):
        load_checkpoint(bad)
    cf = save_checkpoint(tmp_path / "cf.safetensors", get_family("chessformer").build(
        get_family("chessformer").preset("cf-tiny")), trained=False)
    bad = _rewrite(cf, tmp_path / "cf-enc.safetensors", metadata={"input_encoding": ENCODING})
    with pytest.raises(CheckpointError, match="'chessbench/fen77' is not one chessformer accepts"):
        load_checkpoint(bad)


@pytest.mark.parametrize("change,message", [
    ({"head": "state_value"}, r"'position_embed.weight' has shape \[79, 32\], the config needs \[78, 32\]"),
    ({"layers": 3}, "missing blocks.2"),
    ({"embed": 48, "heads": 4}, "has shape"),
    ({"head": "q_value"}, "bad chessbench config: head must be one of"),
    ({"vocab": 31}, "vocab 31 is too small"),
    ({"layers": 1000}, "layers 1000 is over the limit of 64"),
    ({"colour": "white"}, "bad chessbench config"),
])
def test_a_config_that_does_not_match_its_tensors(saved, tmp_path, change, message):
    config = dict(PRESETS["cb-tiny"].to_dict(), **change)
    bad = _rewrite(saved, tmp_path / "cfg.safetensors", metadata={"config": json.dumps(config)})
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(bad)


def test_unknown_family(saved, tmp_path):
    bad = _rewrite(saved, tmp_path / "fam.safetensors", metadata={"family": "chessbench-xl"})
    with pytest.raises(CheckpointError, match="unknown model family 'chessbench-xl'"):
        load_checkpoint(bad)


def test_config_validation():
    with pytest.raises(ValueError, match="not divisible"):
        ChessBenchConfig(embed=30, heads=4)
    assert ChessBenchConfig(head="state_value", vocab=31).sequence_length == 78
    assert ChessBenchConfig().sequence_length == 79 and ChessBenchConfig(head="behavioural_cloning").outputs == 1968
    assert FAMILY.preset_name(PRESETS["cb-9m"].to_dict()) == "cb-9m"
    assert get_encoding(ENCODING) is get_encoding(FAMILY.encoding_of(PRESETS["cb-small"]))


def test_non_finite_weights_are_named(tmp_path):
    from analysis.evaluator import NonFiniteOutput

    evaluator = _evaluator()
    with torch.no_grad():
        evaluator.model.head.bias.fill_(float("nan"))
    with pytest.raises(NonFiniteOutput, match="non-finite output \\(action_logits\\)"):
        evaluator.evaluate([chess.Board()])
    path = save_checkpoint(tmp_path / "nan.safetensors", evaluator.model, trained=True)
    from webapp.networks.registry import inspect_checkpoint  # the site's check: probe before registering

    with pytest.raises(CheckpointError, match="non-finite"):
        inspect_checkpoint(path)
