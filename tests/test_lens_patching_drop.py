"""``analysis.lens.patching``: log-odds and the batched patched drop equal the same quantities
computed one patch at a time (issue 38, the studies' measure)."""

from __future__ import annotations

import chess
import pytest
import torch

from analysis.lens.patching import log_odds, patched_drop, patched_drops
from analysis.models.lens import ResidualPatch
from tests.test_lens_patching import BLACK_TO_MOVE, CORRUPTED, NETS, WHITE_TO_MOVE

MOVE = chess.Move.from_uci("d5d4")  # Black's queen takes the pawn the corruption removed
SETS = [[chess.D4], [chess.D5], [chess.D4, chess.E4, chess.C4], [], list(range(64))]


@pytest.fixture(scope="module", params=sorted(NETS))
def lens(request, tmp_path_factory):
    return NETS[request.param](tmp_path_factory.mktemp("net"))


def test_log_odds_is_log_p_over_1_minus_p():
    logits = torch.tensor([[2.0, -1.0, 0.5, 0.0], [-30.0, 4.0, 1.0, 0.0]])
    p = logits.softmax(-1)[:, 2]
    assert torch.allclose(log_odds(logits, 2), torch.log(p) - torch.log1p(-p), atol=1e-6)
    assert torch.isfinite(log_odds(torch.tensor([-200.0, 200.0, 0.0]), 0))  # p underflows, the odds do not


def _one_at_a_time(lens, clean, corrupted, point):
    """Each square set's drop from a pass of its own (one variant, one patch)."""
    source = lens.aligned(corrupted, clean)
    index = clean.moves.index(MOVE)
    with torch.no_grad():
        seen, plain = lens.run(source, capture=True)[0], lens.run(clean)[1]
        drops = []
        for squares in SETS:
            mask = torch.zeros(1, 64, dtype=torch.bool)
            mask[0, squares] = True
            _, out = lens.run(clean, patches=[ResidualPatch(point, seen[lens.check_point(point)], mask)])
            drops.append((log_odds(plain.logits, index) - log_odds(out.logits, index))[0])
    return torch.stack(drops)


def test_the_batched_drop_is_each_patch_run_alone(lens):
    clean, corrupted = (lens.prepare(chess.Board(f)) for f in (BLACK_TO_MOVE, CORRUPTED))
    points = [lens.readouts[0], lens.readouts[-1]]
    table = patched_drops(lens, clean, corrupted, MOVE, points, SETS)
    assert table.shape == (2, len(SETS))
    for i, point in enumerate(points):
        row = patched_drop(lens, clean, corrupted, MOVE, point, SETS)
        assert torch.allclose(row, table[i], atol=1e-4)
        alone = _one_at_a_time(lens, clean, corrupted, point)
        assert torch.allclose(row, alone, atol=1e-4), (point, row, alone)
        assert row[3] == 0  # no square patched: the clean pass itself
    assert table[:, -1].abs().min() > 1e-3  # the whole point from the corrupted pass moves the move's odds


def test_bad_input_says_why(lens):
    clean, corrupted = (lens.prepare(chess.Board(f)) for f in (BLACK_TO_MOVE, CORRUPTED))
    with pytest.raises(ValueError, match="not a legal move"):
        patched_drop(lens, clean, corrupted, chess.Move.from_uci("e2e4"), "embed", SETS)
    with pytest.raises(ValueError, match="unknown readout point"):
        patched_drop(lens, clean, corrupted, MOVE, "99.nothing", SETS)
    with pytest.raises(ValueError, match="outside 0..63"):
        patched_drop(lens, clean, corrupted, MOVE, "embed", [[64]])
    if lens.family in ("lc0-attention", "lc0-resnet", "chessformer", "alphagateau"):  # squares mirrored for Black
        with pytest.raises(ValueError, match="different rows"):
            patched_drop(lens, clean, lens.prepare(chess.Board(WHITE_TO_MOVE)), MOVE, "embed", SETS)
