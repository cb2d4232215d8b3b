"""The lens on Giraffe (shipped weights): feature-group writes exact, hidden units scaled exactly,
one readout point (no residual stream) that gives the network's own output."""

from __future__ import annotations

from pathlib import Path

import chess
import numpy as np
import pytest
import torch

from analysis.checkpoint import load_checkpoint
from analysis.lens import lens_for
from analysis.lens.core import ablate, logit_lens
from analysis.lens.neurons import where_else

ROOT = Path(__file__).resolve().parents[1]
FENS = ["r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 2 3",
        "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"]


@pytest.fixture(scope="module")
def lens():
    return lens_for(load_checkpoint(ROOT / "weights" / "giraffe.safetensors")[0])


@pytest.mark.parametrize("fen", FENS)
def test_group_writes_sum_with_the_bias_to_the_hidden_input(lens, fen):
    prepared = lens.prepare(chess.Board(fen))
    with torch.no_grad():
        for network in range(2):
            writes, bias, output = lens.group_writes(prepared, network)
            assert writes.shape[0] == 3
            torch.testing.assert_close(writes.sum(0) + bias, output, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("fen", FENS)
def test_scale_one_is_clean_and_the_one_readout_is_the_output(lens, fen):
    prepared = lens.prepare(chess.Board(fen))
    ones = {kind: torch.ones(2, u.layers, u.per_layer) for kind, u in lens.units.items()}
    with torch.no_grad():
        own = lens.model(prepared.inputs)
        (hidden,), out = lens.run(prepared, 2, ones, capture=True)
        last = lens.unembed(prepared, hidden, "hidden")
    assert lens.readouts == ["hidden"] and hidden.shape[1] == 1 + len(prepared.moves)
    for read in (out, last):
        torch.testing.assert_close(read.logits, own["policy"][:, prepared.extra["indices"]].expand(2, -1),
                                   atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(read.score, ((own["value"] + 1) / 2).expand(2), atol=1e-6, rtol=1e-6)


def test_scaled_units_and_groups_are_exact(lens):
    prepared = lens.prepare(chess.Board(FENS[0]))
    c, e = lens.model.config, lens.model.evaluator
    units = torch.ones(2, 1, c.hidden + c.move_hidden)
    units[0, 0, :c.hidden] = 0  # every evaluator unit removed: the value is its output bias alone
    units[1, 0, c.hidden:] = 0  # every move-evaluator unit removed: each move's logit is the bias
    groups = torch.ones(1, 2, 3)
    groups[0, 0] = 0  # every evaluator group removed: the hidden layer sees only its bias
    with torch.no_grad():
        _, out = lens.run(prepared, 2, {"mlp": units})
        _, no_groups = lens.run(prepared, 1, {"group": groups})
        expected = torch.tanh(e.out(torch.relu(e.hidden.bias)))
    torch.testing.assert_close(out.score[0], (torch.tanh(e.out.bias[0]) + 1) / 2)
    torch.testing.assert_close(out.logits[1], lens.model.move_evaluator.out.bias.expand(len(prepared.moves)))
    torch.testing.assert_close(no_groups.score[0], (expected[0] + 1) / 2)


def test_no_depth_and_no_heads_are_said(lens):
    assert "no residual stream" in lens.why_not("depth") and "no attention heads" in lens.why_not("head")
    assert "no attention heads" in lens.why_not("split")
    view = logit_lens(lens, chess.Board(FENS[1]))
    assert view.logits.shape[0] == 1
    change = ablate(lens, chess.Board(FENS[1]), "group", 1, 2, 0.0)  # the move evaluator's square group
    assert abs(sum(change.scaled) - 1) < 1e-5 and (change.scaled != change.clean).any()


def test_where_else_over_a_pool_with_a_finished_game(lens):
    mated = chess.Board("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")  # fool's mate
    boards = [chess.Board(FENS[0]), mated, chess.Board(FENS[1])]
    c = lens.model.config
    scan = where_else(lens, boards, 0, c.hidden + 3, top=3, batch=2)  # a move-evaluator unit
    assert scan.complete and len(scan.top) == 3 and all(np.isfinite(f.peak) for f in scan.top)
    assert next(f for f in scan.top if f.index == 1).peak == 0.0 and scan.top[0].square is None
