"""The sanity concept: whether a piece stands on each real square is in every network's input, so the
first readout point reads it near perfectly, on the trained and on an untrained net of every family with
squares, Black to move included (a failure means a square-mapping bug: the mover's mirror)."""

from __future__ import annotations

from pathlib import Path

import chess
import numpy as np
import pytest
import torch

from analysis.checkpoint import load_checkpoint
from analysis.heads.sample import load_sample
from analysis.lens import lens_for
from analysis.models import get_family
from analysis.models.lc0 import load_lc0
from analysis.probes.activations import collect, untrained_copy
from analysis.probes.concepts import CONCEPTS
from analysis.probes.fit import FitConfig
from analysis.probes.positions import PositionConfig, build
from analysis.probes.run import probe_concept
from tests.lc0_random_nets import write_net
from tests.test_lens_patching import SYNTH

ROOT = Path(__file__).resolve().parents[1]
# An untrained SE-ResNet's first point is the ReLU of a random 3x3 convolution over 112 planes: 64
# channels, each a random mix of the nine squares' planes, cannot keep the centre square apart from
# its neighbours (fewer channels than 9 x 12 piece features), so no linear probe reads it perfectly:
# measured 0.83 on maia-1900's architecture, untrained with seed 1 (a mirror bug gives about 0.6). The
# trained net keeps it (1.00): the 0.99 bar of issue 39 holds for every other family, trained or not.
UNTRAINED_RESNET_FLOOR = 0.78


def _random(family: str, **config):
    torch.manual_seed(0)
    fam = get_family(family)
    return fam.build(fam.config(config)).eval()


NETS = {
    "chessformer": lambda tmp: _random("chessformer", layers=2, embed=32, heads=4, ffn=48, position="shaw",
                                       value_channels=4, value_embed=8, reward_buckets=4),
    "lc0-attention": lambda tmp: load_lc0(write_net(tmp / "synth.pb.gz", SYNTH, seed=3)),
    "lc0-resnet": lambda tmp: load_checkpoint(ROOT / "weights" / "maia-1900.safetensors")[0],
    "chessbench-bc": lambda tmp: _random("chessbench", head="behavioural_cloning", layers=2, embed=32, heads=4),
    "alphagateau": lambda tmp: load_checkpoint(ROOT / "weights" / "ag-cpu.safetensors")[0],
}


@pytest.fixture(scope="module")
def data():
    # The head atlas's 256 positions: games and puzzles, both sides to move.
    boards = load_sample(256)
    assert {b.turn for b in boards} == {chess.WHITE, chess.BLACK}
    return build([CONCEPTS["piece_on_square"]], PositionConfig(positions=256), fens=[b.fen() for b in boards])


def _first_point(model, data) -> float:
    acts = collect(lens_for(model), data.boards)
    x = acts.point(0)
    return probe_concept(data.sets["piece_on_square"], x, None, FitConfig(bootstrap=20)).score.score


@pytest.mark.parametrize("family", sorted(NETS))
def test_piece_on_square_at_the_first_point_trained_and_untrained(family, data, tmp_path):
    model = NETS[family](tmp_path)
    assert _first_point(model, data) >= 0.99
    floor = UNTRAINED_RESNET_FLOOR if family == "lc0-resnet" else 0.99
    assert _first_point(untrained_copy(model, seed=1), data) >= floor


def test_black_to_move_rows_are_real_squares(data):
    """Black-to-move positions alone, on lc0's planes (whose input is the mover's mirror): the rows
    read their own square's occupancy, and scored against the mirrored square's labels the same
    probe falls far short (the test can see a mirror bug)."""
    from analysis.probes.fit import fit, predict, auroc

    black = [i for i, b in enumerate(data.boards) if b.turn == chess.BLACK]
    boards = [data.boards[i] for i in black]
    x = collect(lens_for(NETS["lc0-resnet"](None)), boards).point(0)
    labels = np.stack([CONCEPTS["piece_on_square"].label(b) for b in boards])
    half = len(boards) // 2
    rows = lambda part: (x[part].reshape(-1, x.shape[-1]), labels[part].reshape(-1))
    probe = fit("binary", *rows(slice(0, half)), *rows(slice(0, half)), FitConfig())
    pred = predict(probe, rows(slice(half, None))[0]).reshape(-1, 64)
    test = labels[half:]
    mirrored = test[:, [chess.square_mirror(s) for s in range(64)]]
    assert auroc(pred.reshape(-1), test.reshape(-1)) >= 0.99
    assert auroc(pred.reshape(-1), mirrored.reshape(-1)) < 0.8
