"""The look-ahead lab's bilinear probe (issue 38): it learns a planted rule, it is at chance on
shuffled labels, a seed fixes its result; and the ``probe`` study method on small nets."""

from __future__ import annotations

import pytest
import torch

from analysis.studies.bilinear_probe import MoveProbeData, ProbeConfig, probe_whole_move


def planted(n: int, channels: int = 16, strength: float = 2.0, seed: int = 0) -> MoveProbeData:
    """Random square vectors with a planted line: the 3rd target's vector carries a fixed rotation of
    the 1st target's, and the 3rd source's a rotation of the 3rd target's (a bilinear rule)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 64, channels, generator=g)
    turn_1 = torch.linalg.qr(torch.randn(channels, channels, generator=g))[0]
    turn_2 = torch.linalg.qr(torch.randn(channels, channels, generator=g))[0]
    squares = torch.stack([torch.randperm(64, generator=g)[:3] for _ in range(n)])
    first, target, source = squares.unbind(1)
    rows = torch.arange(n)
    x[rows, target] += strength * x[rows, first] @ turn_1.T
    x[rows, source] += strength * x[rows, target] @ turn_2.T
    return MoveProbeData(x, first, source, target)


def test_probe_learns_a_planted_line():
    result = probe_whole_move(planted(1000), ProbeConfig(), seed=0)
    assert result.mean > 0.9
    assert result.low <= result.mean <= result.high
    assert len(result.per_seed) == 5 and (result.train, result.test) == (700, 300)


def test_probe_is_at_chance_on_shuffled_labels():
    data = planted(1000)
    shuffle = torch.randperm(len(data), generator=torch.Generator().manual_seed(1))
    control = MoveProbeData(data.x, data.first_target, data.third_source[shuffle], data.third_target[shuffle])
    assert probe_whole_move(control, ProbeConfig(), seed=0).mean < 0.1


def test_probe_is_deterministic_under_its_seed():
    data = planted(300, seed=3)
    config = ProbeConfig(seeds=2)
    assert probe_whole_move(data, config, seed=7) == probe_whole_move(data, config, seed=7)


def test_probe_rejects_bad_inputs():
    with pytest.raises(ValueError, match="train_share"):
        ProbeConfig(train_share=1.0)
    with pytest.raises(ValueError, match="one position to train on"):
        probe_whole_move(planted(1), ProbeConfig(seeds=1))
    with pytest.raises(ValueError, match=r"\(N, 64, C\)"):
        MoveProbeData(torch.zeros(2, 32, 4), *(torch.zeros(2, dtype=torch.long),) * 3)
