"""Patching in the lens adapters (issue 38), part 1: every readout point seen by REAL square.

``square_stream`` is checked against the inputs, not against the adapters' own square maps: for a
Black-to-move position, the row an adapter names for real square s must hold, in the network's
own input, the piece that stands on s (lc0 planes: the mover's pieces first, in the mover's
mirrored frame; ChessBench: the FEN character; AlphaGateau: the node's piece planes). A map that
forgot the mirror would find the piece of the mirrored square instead.
"""

from __future__ import annotations

from pathlib import Path

import chess
import pytest
import torch

from analysis.checkpoint import load_checkpoint
from analysis.encoding.chessbench import fen_string
from analysis.encoding.graph import graph_for_width, split_input
from analysis.lens import lens_for
from analysis.models import get_family
from analysis.models.lc0 import load_lc0
from analysis.models.lc0.config import AttentionConfig
from tests.lc0_random_nets import write_net

ROOT = Path(__file__).resolve().parents[1]
BLACK_TO_MOVE = "r3k2r/ppp2ppp/2n1bn2/3qp3/3P4/2N1BN2/PPP1QPPP/R3K2R b KQkq - 4 9"
WHITE_TO_MOVE = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
PIECES = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING)
# A small smolgen net of lc0's BT layout (as tests/test_lens_lc0.py builds it).
SYNTH = AttentionConfig(encoders=2, embed=32, heads=4, d_model=32, ffn=48, dense_features=8, embedding_ffn=48,
                        gates=True, smolgen_compress=4, smolgen_hidden=16, smolgen_gen=8, policy_embed=24,
                        policy_dim=16, shared_policy_embedding=True, value_channels=8, moves_left_channels=8,
                        moves_left_hidden=32, input_format=1)


def _random(family: str, **config):
    torch.manual_seed(0)
    fam = get_family(family)
    return lens_for(fam.build(fam.config(config)).eval())


def _lc0_attention(tmp: Path):
    return lens_for(load_lc0(write_net(tmp / "synth.pb.gz", SYNTH, seed=3)))


# Every family with squares: small untrained nets, or the small shipped weights.
NETS = {
    "chessformer": lambda tmp: _random("chessformer", layers=2, embed=32, heads=4, ffn=48, position="shaw",
                                       value_channels=4, value_embed=8, reward_buckets=4),
    "lc0-attention": _lc0_attention,
    "lc0-resnet": lambda tmp: lens_for(load_checkpoint(ROOT / "weights" / "maia-1900.safetensors")[0]),
    "chessbench-bc": lambda tmp: _random("chessbench", head="behavioural_cloning", layers=2, embed=32, heads=4),
    "chessbench-av": lambda tmp: _random("chessbench", head="action_value", layers=2, embed=32, heads=4, bins=16),
    "alphagateau": lambda tmp: lens_for(load_checkpoint(ROOT / "weights" / "ag-cpu.safetensors")[0]),
}


@pytest.fixture(scope="module", params=sorted(NETS))
def lens(request, tmp_path_factory):
    return NETS[request.param](tmp_path_factory.mktemp("net"))


def _input_piece(lens, prepared, row: int, piece: chess.Piece) -> bool:
    """Whether the network's own input at token ``row`` holds ``piece`` (mover's pieces first)."""
    board = prepared.board
    if lens.family == "chessbench":
        return fen_string(board.fen())[row - 1] == piece.symbol()  # row 0 is BOS
    plane = (0 if piece.color == board.turn else 6) + PIECES.index(piece.piece_type)
    if lens.family == "alphagateau":
        nodes, _ = split_input(prepared.inputs, graph_for_width(prepared.inputs.shape[-1]))
        return bool(nodes[0, row, plane] == 1)
    return bool(prepared.inputs[0, row, plane] == 1)  # lc0 planes: (1, 64 tokens, 112)


@pytest.mark.parametrize("fen", [BLACK_TO_MOVE, WHITE_TO_MOVE])
def test_each_real_square_s_row_holds_that_square_s_piece_in_the_input(lens, fen):
    prepared = lens.prepare(chess.Board(fen))
    for point in lens.readouts:
        rows = lens.square_rows(prepared, point).tolist()
        assert sorted(rows) == sorted(set(rows)) and len(rows) == 64
        for square, piece in prepared.board.piece_map().items():
            assert _input_piece(lens, prepared, rows[square], piece), (point, chess.square_name(square))
    # c7's black pawn is the mover's own piece with Black to move: read where the mirror put it, not at c2
    c7, c2 = lens.square_rows(prepared, "embed")[[chess.C7, chess.C2]].tolist()
    assert _input_piece(lens, prepared, c7, chess.Piece(chess.PAWN, chess.BLACK))
    assert not _input_piece(lens, prepared, c2, chess.Piece(chess.PAWN, chess.BLACK))


def test_square_stream_is_every_point_by_real_square(lens):
    prepared = lens.prepare(chess.Board(BLACK_TO_MOVE))
    with torch.no_grad():
        seen, _ = lens.run(prepared, variants=2, capture=True)
    for point, tensor in zip(lens.readouts, seen):
        by_square = lens.square_stream(prepared, point, tensor)
        tokens = lens.to_tokens(prepared, point, tensor)
        rows = lens.square_rows(prepared, point)
        assert by_square.shape == (2, 64, tokens.shape[-1])
        assert torch.equal(by_square[:, chess.C7], tokens[:, rows[chess.C7]])
        assert torch.equal(lens.from_tokens(prepared, point, tokens), tensor)  # the layout round trip


def test_chessbench_embed_of_c7_is_its_black_pawn_token():
    """The embedding is per token, so the c7 row of ``embed`` is exactly the black pawn's embedding
    at e7's sequence position (FEN rank 8 first): a network-level check of the map."""
    lens = NETS["chessbench-bc"](None)
    prepared = lens.prepare(chess.Board(BLACK_TO_MOVE))
    with torch.no_grad():
        seen, _ = lens.run(prepared, capture=True)
        c7 = lens.square_stream(prepared, "embed", seen[0])[0, chess.C7]
        m = lens.model
        position = 1 + 1 + 8 + 2  # BOS, side to move, rank 8, then a7, b7: c7's black pawn
        assert fen_string(prepared.board.fen())[position - 1] == "p"
        token = prepared.inputs[0, position - 1]
        expected = m.token_embed.weight[token] * m.config.embed ** 0.5 + m.position_embed.weight[position]
    assert torch.allclose(c7, expected, atol=1e-6)


def test_a_point_without_squares_says_why():
    giraffe = lens_for(load_checkpoint(ROOT / "weights" / "giraffe.safetensors")[0])
    prepared = giraffe.prepare(chess.Board(BLACK_TO_MOVE))
    with torch.no_grad():
        seen, _ = giraffe.run(prepared, capture=True)
    with pytest.raises(ValueError, match="no squares"):
        giraffe.square_stream(prepared, "hidden", seen[0])
    assert giraffe.point_vector(prepared, "hidden", seen[0]).shape == (1, giraffe.model.config.hidden)
    for capability in ("patch", "head_patch", "attention_zero"):
        assert not giraffe.has(capability) and giraffe.why_not(capability).startswith("Giraffe's")
