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
from analysis.models.lens import ResidualPatch
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


# --- residual patches -------------------------------------------------------------------------
# The corrupted copy differs on the board alone (White's d4 pawn removed; same side to move, castling,
# en passant and clocks), so for ChessBench "all squares" and "the whole token stream" coincide on
# every token but the board's; an all-True patch takes the whole point anyway (see ResidualPatch).
CORRUPTED = "r3k2r/ppp2ppp/2n1bn2/3qp3/8/2N1BN2/PPP1QPPP/R3K2R b KQkq - 4 9"


def _passes(lens, clean_fen=BLACK_TO_MOVE, corrupted_fen=CORRUPTED):
    clean = lens.prepare(chess.Board(clean_fen))
    corrupted = lens.aligned(lens.prepare(chess.Board(corrupted_fen)), clean)
    with torch.no_grad():
        seen, _ = lens.run(corrupted, capture=True)
    return clean, corrupted, seen


def _own_logits(lens, fen):
    prepared = lens.prepare(chess.Board(fen))
    with torch.no_grad():
        return prepared.moves, lens.run(prepared)[1].logits[0]


def test_every_square_of_a_point_from_the_corrupted_pass_gives_the_corrupted_output(lens):
    clean, _, seen = _passes(lens)
    moves, corrupted_logits = _own_logits(lens, CORRUPTED)
    both = [m for m in clean.moves if m in moves]
    assert len(both) > 20
    at_clean = torch.tensor([clean.moves.index(m) for m in both])
    at_corrupted = torch.tensor([moves.index(m) for m in both])
    points = sorted({0, len(lens.readouts) // 2, len(lens.readouts) - 1})
    patches = [lens.readouts[i] for i in points]
    everything = torch.ones(1, 64, dtype=torch.bool)
    for point, index in zip(patches, points):
        with torch.no_grad():
            _, out = lens.run(clean, patches=[ResidualPatch(point, seen[index], everything)])
        diff = (out.logits[0, at_clean] - corrupted_logits[at_corrupted]).abs().max()
        assert diff < 1e-5, (point, diff)


def test_patching_from_the_clean_pass_itself_changes_nothing(lens):
    clean = lens.prepare(chess.Board(BLACK_TO_MOVE))
    generator = torch.Generator().manual_seed(0)
    squares = torch.rand(3, 64, generator=generator) < 0.5
    with torch.no_grad():  # the source from a pass of the same batch shape: bit for bit the same stream
        seen, plain = lens.run(clean, variants=3, capture=True)  # (a 1-variant pass may round differently)
        patches = [ResidualPatch(point, seen[i], squares) for i, point in enumerate(lens.readouts)]
        patched_seen, patched = lens.run(clean, variants=3, capture=True, patches=patches)
    assert torch.equal(patched.logits, plain.logits)
    assert all(torch.equal(a, b) for a, b in zip(seen, patched_seen))


def test_a_black_to_move_patch_lands_on_the_real_square_not_its_mirror(lens):
    """Black's 1st move d5d4 (the queen takes on d4): patching d4 alone at a middle point puts the
    corrupted d4 there, leaves every other square (d5, d4's mirror, included) clean."""
    clean, _, seen = _passes(lens)
    index = len(lens.readouts) // 2
    point = lens.readouts[index]
    target = chess.Move.from_uci("d5d4").to_square
    squares = torch.zeros(1, 64, dtype=torch.bool)
    squares[0, target] = True
    with torch.no_grad():
        clean_seen, _ = lens.run(clean, capture=True)
        patched_seen, _ = lens.run(clean, capture=True, patches=[ResidualPatch(point, seen[index], squares)])
    by_square = {name: lens.square_stream(clean, point, s[index])[0]
                 for name, s in (("clean", clean_seen), ("corrupted", seen), ("patched", patched_seen))}
    assert torch.equal(by_square["patched"][target], by_square["corrupted"][target])
    assert not torch.equal(by_square["clean"][target], by_square["corrupted"][target])
    others = torch.arange(64) != target
    assert torch.equal(by_square["patched"][others], by_square["clean"][others])
    mirror = chess.square_mirror(target)
    assert torch.equal(by_square["patched"][mirror], by_square["clean"][mirror])


def test_a_resnet_patch_spreads_around_the_real_square_only():
    """Maia's blocks are two 3x3 convolutions (plus SE's per-channel gate, which reaches every square):
    a patch of d4 at ``embed`` moves the next block's stream most within two squares of d4, and
    the mirror d5's far side (rank 7 and beyond) least."""
    lens = NETS["lc0-resnet"](None)
    clean, _, seen = _passes(lens)
    squares = torch.zeros(1, 64, dtype=torch.bool)
    squares[0, chess.D4] = True
    with torch.no_grad():
        clean_seen, _ = lens.run(clean, capture=True)
        patched_seen, _ = lens.run(clean, capture=True, patches=[ResidualPatch("embed", seen[0], squares)])
    change = (lens.square_stream(clean, "0.block", patched_seen[1])
              - lens.square_stream(clean, "0.block", clean_seen[1]))[0].abs().sum(-1)
    near = [s for s in range(64) if chess.square_distance(s, chess.D4) <= 2]
    far = [s for s in range(64) if chess.square_distance(s, chess.D4) > 2]
    assert change[near].min() > change[far].max()
