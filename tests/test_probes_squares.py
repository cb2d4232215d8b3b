"""The sanity concepts: whether a piece stands on each real square, and which type it is, are in every
network's input, so the first readout point reads them near perfectly, on the trained and on an
untrained net of every family with squares, Black to move included (a failure means a square-mapping
bug: the mover's mirror). One collection of activations a net serves all seven concepts."""

from __future__ import annotations

from pathlib import Path

import chess
import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_limits

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
TYPES = tuple(f"{chess.piece_name(t)}_on_square" for t in chess.PIECE_TYPES)  # pawn ... king
SANITY = ("piece_on_square",) + TYPES
# An untrained SE-ResNet's first point is the ReLU of a random 3x3 convolution over 112 planes: 64
# channels, each a random mix of the nine squares' planes, cannot keep the centre square apart from
# its neighbours (fewer channels than 9 x 12 piece features), so no linear probe reads it perfectly.
# Occupancy: measured 0.83 on maia-1900's architecture, untrained with seed 1 (a mirror bug gives
# about 0.6). Piece type, per type: measured 0.96 (bishop) to 0.99 (knight) with seed 1, 0.95 to 1.00
# over seeds 2 to 4 (a mirror bug gives 0.61 to 0.81, test_black_to_move_rows_are_real_squares);
# higher than occupancy, as measured, not tuned. The trained net keeps all seven (1.00): the 0.99 bar
# of issue 39 holds for every other family, trained or not.
UNTRAINED_RESNET_FLOOR = {"piece_on_square": 0.78, **{name: 0.92 for name in TYPES}}

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
    return build([CONCEPTS[name] for name in SANITY], PositionConfig(positions=256), fens=[b.fen() for b in boards])


def _first_point(model, data) -> dict[str, float]:
    """Every sanity concept's score at the first point, from one collection of the activations."""
    x = collect(lens_for(model), data.boards).point(0)
    with threadpool_limits(1):  # as the probe command runs them: more BLAS threads only contend here
        return {name: probe_concept(data.sets[name], x, None, FitConfig(bootstrap=20)).score.score
                for name in SANITY}


@pytest.mark.parametrize("family", sorted(NETS))
def test_piece_and_type_on_square_at_the_first_point_trained_and_untrained(family, data, tmp_path):
    model = NETS[family](tmp_path)
    trained = _first_point(model, data)
    assert all(score >= 0.99 for score in trained.values()), trained
    untrained = _first_point(untrained_copy(model, seed=1), data)
    floors = UNTRAINED_RESNET_FLOOR if family == "lc0-resnet" else dict.fromkeys(SANITY, 0.99)
    assert all(untrained[name] >= floors[name] for name in SANITY), untrained


def test_piece_types_partition_occupancy(data):
    """Each type's label is python-chess's piece type on the real square, colour-blind; the six
    types never overlap and add up to occupancy."""
    for board in data.boards:
        types = np.stack([CONCEPTS[name].label(board) for name in TYPES])
        assert np.array_equal(types.sum(axis=0), CONCEPTS["piece_on_square"].label(board))
        for square, piece in board.piece_map().items():
            assert types[piece.piece_type - 1, square] == 1


def test_black_to_move_rows_are_real_squares(data):
    """Black-to-move positions alone, on lc0's planes (whose input is the mover's mirror): the rows
    read their own square's occupancy and piece type, and scored against the mirrored square's labels
    the same probe falls far short (the test can see a mirror bug: measured 0.65 to 0.81 mirrored, the
    back-rank rooks and kings highest, as both back ranks hold them)."""
    from analysis.probes.fit import fit, predict, auroc

    black = [i for i, b in enumerate(data.boards) if b.turn == chess.BLACK]
    boards = [data.boards[i] for i in black]
    x = collect(lens_for(NETS["lc0-resnet"](None)), boards).point(0)
    half = len(boards) // 2
    for name in SANITY:
        labels = np.stack([CONCEPTS[name].label(b) for b in boards])
        rows = lambda part: (x[part].reshape(-1, x.shape[-1]), labels[part].reshape(-1))
        probe = fit("binary", *rows(slice(0, half)), *rows(slice(0, half)), FitConfig())
        pred = predict(probe, rows(slice(half, None))[0]).reshape(-1)
        test = labels[half:]
        mirrored = test[:, [chess.square_mirror(s) for s in range(64)]]
        assert auroc(pred, test.reshape(-1)) >= 0.99, name
        limit = 0.8 if name == "piece_on_square" else 0.9
        assert auroc(pred, mirrored.reshape(-1)) < limit, name
