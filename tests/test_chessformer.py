"""The Chessformer network: Shaw attention against the naive formula, attention maps, presets."""

import math

import chess
import numpy as np
import pytest
import torch

from analysis.encoding import encode_tokens
from analysis.models.inference import TorchEvaluator
from analysis.models.chessformer import (
    CONFIG_LIMITS, PRESETS, Chessformer, ChessformerConfig, SelfAttention, displacement_index, parameter_count,
    preset,
)

SICILIAN = "r1bqkb1r/pp2pppp/2np1n2/8/3NP3/2N5/PPP2PPP/R1BQKB1R b KQkq - 3 6"


def naive_shaw(attn: SelfAttention, x: torch.Tensor) -> torch.Tensor:
    """Eqs. 6-7 of the paper, pair by pair, with an explicit (T, T, D) table per head."""
    B, T, E = x.shape
    H, D = attn.heads, attn.head_dim
    q = attn.q(x).view(B, T, H, D).transpose(1, 2)
    k = attn.k(x).view(B, T, H, D).transpose(1, 2)
    v = attn.v(x).view(B, T, H, D).transpose(1, 2)
    rel = torch.zeros(T, T, dtype=torch.long)
    for i in range(T):
        for j in range(T):
            dr = i // 8 - j // 8
            df = i % 8 - j % 8
            rel[i, j] = 15 * (dr + 7) + (df + 7)
    aq, ak, av = attn.shaw_q[:, rel], attn.shaw_k[:, rel], attn.shaw_v[:, rel]  # (H, T, T, D)
    qi = q.unsqueeze(3) + aq  # (B, H, T, T, D): x_i W^Q + a^Q_ij
    kj = k.unsqueeze(2) + ak  # x_j W^K + a^K_ij
    logits = (qi * kj).sum(-1) / math.sqrt(D)
    alpha = logits.softmax(-1)
    z = (alpha.unsqueeze(-1) * (v.unsqueeze(2) + av)).sum(3)  # sum_j alpha_ij (x_j W^V + a^V_ij)
    return attn.out(z.transpose(1, 2).reshape(B, T, E))


def test_displacement_index_is_the_2d_offset():
    rel = displacement_index()
    assert rel.shape == (64, 64)
    assert rel[chess.A1, chess.A1] == 15 * 7 + 7
    assert rel[chess.H8, chess.A1] == 15 * 14 + 14 and rel[chess.A1, chess.H8] == 0
    # Pairs with the same displacement share an entry.
    assert rel[chess.B2, chess.C4] == rel[chess.E5, chess.F7]


@pytest.mark.parametrize("batch", [3, SelfAttention.SMALL_BATCH + 1])
def test_efficient_shaw_equals_the_naive_formula(batch):
    torch.manual_seed(0)
    attn = SelfAttention(ChessformerConfig(layers=1, embed=32, heads=4, ffn=32, position="shaw")).double()
    with torch.no_grad():
        for table in (attn.shaw_q, attn.shaw_k, attn.shaw_v):
            table.normal_(0, 0.5)
    x = torch.randn(batch, 64, 32, dtype=torch.float64)
    fast, weights = attn(x, need_weights=True)
    torch.testing.assert_close(fast, naive_shaw(attn, x), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(weights.sum(-1), torch.ones(batch, 4, 64, dtype=torch.float64))
    with torch.no_grad():  # the inference path caches the per-pair tables; they must follow the weights
        cached, _ = attn(x)
        attn.shaw_k.add_(0.1)
        moved, _ = attn(x)
    torch.testing.assert_close(cached, fast.detach())
    torch.testing.assert_close(moved, naive_shaw(attn, x).detach(), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("position", ["absolute", "relative_bias", "shaw"])
def test_every_position_representation_runs_and_learns_positions(position):
    torch.manual_seed(1)
    model = Chessformer(ChessformerConfig(layers=2, embed=32, heads=4, ffn=32, position=position,
                                          value_channels=4, value_embed=16, reward_buckets=8))
    tokens = torch.from_numpy(encode_tokens([chess.Board(), chess.Board(SICILIAN)]))
    out = model(tokens)
    assert "attention" not in out  # the default path does not collect attention
    assert out["policy"].shape == (2, 1858) and out["wdl"].shape == (2, 3)
    assert out["q_cat"].shape == (2, 8) and out["st"].shape == (2,)
    assert torch.isfinite(out["policy"]).all()
    loss = out["policy"].logsumexp(-1).sum() + out["wdl"].sum() + out["q"].sum()
    loss.backward()
    grads = {name: p.grad for name, p in model.named_parameters()}
    position_params = [n for n in grads if any(k in n for k in ("absolute", "relative_bias", "shaw_"))]
    assert position_params and all(grads[n] is not None and grads[n].abs().sum() > 0 for n in position_params)


def test_attention_rows_sum_to_one_and_shape():
    torch.manual_seed(0)
    evaluator = TorchEvaluator(Chessformer(PRESETS["cf-tiny"]), device="cpu")
    ev = evaluator.evaluate([chess.Board(SICILIAN)], attention=True)[0]
    assert ev.attention.shape == (2, 4, 64, 64)
    np.testing.assert_allclose(ev.attention.sum(-1), 1.0, atol=1e-5)


def test_black_attention_is_the_mirror_of_the_mirrored_position():
    torch.manual_seed(3)
    model = Chessformer(PRESETS["cf-tiny"])
    with torch.no_grad():
        model.embed.weight[:, 108] = 0  # ignore the side-to-move plane: both boards then look identical
    evaluator = TorchEvaluator(model, device="cpu")
    black = chess.Board(SICILIAN)
    white = black.mirror()
    assert black.turn == chess.BLACK and white.turn == chess.WHITE
    eb, ew = evaluator.evaluate([black, white], attention=True)
    flip = np.arange(64) ^ 56
    np.testing.assert_allclose(eb.attention, ew.attention[:, :, flip][:, :, :, flip], atol=1e-6)
    # Real squares: the black knight on f6 attends as the white knight on f3 of the mirror.
    assert not np.allclose(eb.attention[0, 0, chess.F6], eb.attention[0, 0, chess.F3])
    for move, p in eb.policy.items():
        mirrored = chess.Move(chess.square_mirror(move.from_square), chess.square_mirror(move.to_square), move.promotion)
        assert ew.policy[mirrored] == pytest.approx(p, abs=1e-6)
    assert eb.wdl == pytest.approx(ew.wdl, abs=1e-6)


def test_policy_covers_legal_moves_only():
    torch.manual_seed(0)
    evaluator = TorchEvaluator(Chessformer(PRESETS["cf-tiny"]), device="cpu")
    boards = [chess.Board(), chess.Board(SICILIAN), chess.Board("4k3/P7/8/8/8/8/8/4K3 w - - 0 1"),
              chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")]  # the last is stalemate
    evaluations = evaluator.evaluate(boards)
    for board, ev in zip(boards, evaluations):
        assert set(ev.policy) == set(board.legal_moves)
        if ev.policy:
            assert sum(ev.policy.values()) == pytest.approx(1.0, abs=1e-9)
        assert 0.0 <= ev.score <= 1.0 and sum(ev.wdl) == pytest.approx(1.0, abs=1e-5)
    assert evaluations[3].policy == {}
    # All four promotions of the a-pawn get their own probability mass.
    promos = {m.promotion for m in evaluations[2].policy if m.from_square == chess.A7}
    assert promos == {chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT}


def test_temperature_flattens_the_policy():
    torch.manual_seed(0)
    evaluator = TorchEvaluator(Chessformer(PRESETS["cf-tiny"]), device="cpu")
    board = chess.Board(SICILIAN)
    sharp, flat = evaluator.evaluate([board], temperature=0.5)[0], evaluator.evaluate([board], temperature=4.0)[0]
    assert max(sharp.policy.values()) > max(flat.policy.values())


def test_batch_results_match_single_evaluations():
    torch.manual_seed(0)
    evaluator = TorchEvaluator(Chessformer(PRESETS["cf-tiny"]), device="cpu")
    boards = [chess.Board(), chess.Board(SICILIAN)]
    together = evaluator.evaluate(boards)
    for board, ev in zip(boards, together):
        alone = evaluator.evaluate([board])[0]
        assert alone.score == pytest.approx(ev.score, abs=1e-5)


def test_chunked_inference_equals_one_batch():
    torch.manual_seed(0)
    model = Chessformer(PRESETS["cf-tiny"]).eval()
    tokens = torch.randn(Chessformer.CPU_INFERENCE_CHUNK * 2 + 5, 64, 112)
    with torch.no_grad():
        chunked = model(tokens, need_attention=True)
    whole = model(tokens, need_attention=True)  # grad enabled: one batch
    for key, value in whole.items():
        torch.testing.assert_close(chunked[key], value.detach(), atol=1e-5, rtol=1e-5)


def test_preset_sizes():
    counts = {}
    for name, config in PRESETS.items():
        with torch.device("meta"):
            counts[name] = parameter_count(Chessformer(config))
    assert counts["cf-tiny"] < 100_000
    assert 1_000_000 <= counts["cf-small"] <= 2_000_000
    assert abs(counts["cf-6m"] - 6e6) / 6e6 < 0.10
    assert abs(counts["cf-240m"] - 243e6) / 243e6 < 0.10
    assert PRESETS["cf-6m"].layers == 8 and PRESETS["cf-6m"].embed == 256 and PRESETS["cf-6m"].heads == 8
    assert PRESETS["cf-240m"].layers == 15 and PRESETS["cf-240m"].embed == 1024 and PRESETS["cf-240m"].ffn == 4096


def test_config_errors():
    with pytest.raises(ValueError, match="divisible"):
        ChessformerConfig(embed=30, heads=4)
    with pytest.raises(ValueError, match="position"):
        ChessformerConfig(position="rotary")
    with pytest.raises(ValueError, match="preset"):
        preset("cf-huge")


@pytest.mark.parametrize("field", sorted(CONFIG_LIMITS))
def test_config_sizes_are_bounded(field):
    limit = CONFIG_LIMITS[field]
    assert all(getattr(config, field) <= limit for config in PRESETS.values())
    with pytest.raises(ValueError, match=f"{field} {limit + 1} is over the limit of {limit}"):
        ChessformerConfig(**{field: limit + 1, **({"heads": 1} if field == "embed" else {})})
