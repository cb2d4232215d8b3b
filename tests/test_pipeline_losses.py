"""HL-Gauss targets and the Chessformer loss terms."""

import pytest
import torch

from analysis.models.chessformer.losses import ChessformerLossWeights, chessformer_losses
from analysis.models.losses import bin_centers, expected_value, hl_gauss_loss, hl_gauss_targets, sharpen


@pytest.mark.parametrize("num_bins", [32, 128])
def test_hl_gauss_targets_sum_to_one_and_recover_the_value(num_bins):
    values = torch.tensor([0.1, 0.2, 0.37, 0.5, 0.731, 0.9])
    targets = hl_gauss_targets(values, num_bins)
    assert targets.shape == (6, num_bins)
    assert torch.allclose(targets.sum(-1), torch.ones(6), atol=1e-6)
    assert (targets >= 0).all()
    mean = targets @ bin_centers(num_bins)
    assert torch.allclose(mean, values, atol=1e-3)
    # Near the ends the Gaussian is cut off, so the mean is pulled inwards, but only a little.
    edge = hl_gauss_targets(torch.tensor([0.0, 1.0]), num_bins) @ bin_centers(num_bins)
    assert edge[0] < 1.0 / num_bins and edge[1] > 1 - 1.0 / num_bins
    # sigma = 0.75 bin width: the mass sits on a few bins around the value, not one.
    assert ((targets > 1e-3).sum(-1) >= 3).all()


def test_hl_gauss_on_other_support_and_loss_minimum():
    q = torch.tensor([-0.8, 0.0, 0.6])
    targets = hl_gauss_targets(q, 32, low=-1.0, high=1.0)
    assert torch.allclose(targets @ bin_centers(32, -1.0, 1.0), q, atol=2e-3)
    logits_true = targets.clamp_min(1e-12).log()
    assert hl_gauss_loss(logits_true, q, low=-1.0, high=1.0) < hl_gauss_loss(torch.zeros(3, 32), q, low=-1.0, high=1.0)
    assert torch.allclose(expected_value(logits_true, -1.0, 1.0), q, atol=2e-3)


def test_sharpen_temperature_four_flattens_the_policy():
    p = torch.tensor([[0.7, 0.2, 0.1, 0.0]])
    soft = sharpen(p, 4.0)
    assert torch.allclose(soft.sum(-1), torch.ones(1))
    assert soft[0, 0] < p[0, 0] and soft[0, 2] > p[0, 2] and soft[0, 3] == 0


def test_chessformer_losses_weights_and_masks():
    torch.manual_seed(0)
    b, k = 4, 10
    legal = torch.zeros(b, k, dtype=torch.bool)
    legal[:, :5] = True
    policy = torch.zeros(b, k)
    policy[:, 0] = 1.0
    outputs = {"policy": torch.randn(b, k, requires_grad=True), "soft_policy": torch.randn(b, k),
               "wdl": torch.randn(b, 3), "q": torch.tanh(torch.randn(b)), "q_err": torch.rand(b),
               "st": torch.tanh(torch.randn(b)), "st_err": torch.rand(b), "q_cat": torch.randn(b, 8),
               "st_cat": torch.randn(b, 8)}
    batch = {"policy": policy, "legal": legal, "wdl": torch.tensor([[0.2, 0.5, 0.3]] * b),
             "q": torch.zeros(b), "st": torch.zeros(b), "st_mask": torch.tensor([True, False, True, False])}
    weights = ChessformerLossWeights()
    terms = chessformer_losses(outputs, batch, weights)
    assert weights.soft_policy == 8.0 and weights.q_cat == 0.0  # the paper's values
    expected = sum(getattr(weights, n) * terms[n] for n in ("policy", "soft_policy", "wdl", "q", "q_err", "st", "st_err"))
    assert torch.allclose(terms["total"], expected)
    assert all(torch.isfinite(v) for v in terms.values())
    terms["total"].backward()
    grad = outputs["policy"].grad
    assert torch.all(grad[:, 5:] == 0)  # illegal moves are masked out of the softmax
