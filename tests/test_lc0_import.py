"""The lc0 importer's own behaviour: dequantisation, refusals, input formats, conversion, CLI."""

from __future__ import annotations

import gzip
import struct

import chess
import numpy as np
import pytest
import torch

from analysis.checkpoint import CheckpointError, load_checkpoint
from analysis.cli import main
from analysis.encoding.policy_index import move_to_index
from analysis.models.lc0.convert import convert
from analysis.models.lc0.evaluate import evaluate_boards
from analysis.models.lc0.convert.load import from_lc0, load_lc0
from analysis.encoding.lc0_formats import (FLIP, MIRROR, TRANSPOSE, apply_transform, encode_position,
                                        move_indices)
from analysis.models.lc0.convert.proto import net_class
from analysis.models.lc0.convert.reader import parse_net, read_net
from analysis.models.lc0.convert.weights import decode_layer
from analysis.eval.specs import resolve_evaluator
from tests.conftest import require_shared_data

T1 = "lc0/synthetic/synth_t1_pemap_single.pb.gz"
SE = "lc0/synthetic/synth_se_2x16_wdl_mlh.pb.gz"
BT = "lc0/synthetic/synth_bt_dense_multihead.pb.gz"  # input format 5 (canonical V2)


def layer(**fields):
    msg = net_class()().weights.input.weights
    msg.MergeFrom(type(msg)(**fields))
    return msg


# -- dequantisation -------------------------------------------------------------------------------

def test_linear16_uses_lc0s_formula():
    raw = np.array([0, 65535, 32768, 1], "<u2").tobytes()
    values = decode_layer(layer(min_val=-2.0, max_val=3.0, params=raw), "x")
    theta = np.array([0, 65535, 32768, 1], np.float32) / np.float32(65535)
    np.testing.assert_array_equal(values, np.float32(-2) * (1 - theta) + np.float32(3) * theta)
    assert values[0] == -2.0 and values[1] == 3.0


@pytest.mark.parametrize("encoding, dtype", [(2, "<f2"), (4, "<f4")])
def test_float_encodings(encoding, dtype):
    data = np.array([1.5, -0.25, 3.0], dtype)
    np.testing.assert_array_equal(decode_layer(layer(params=data.tobytes(), encoding=encoding), "x"),
                                  data.astype(np.float32))


def test_bfloat16_is_the_top_half_of_float32():
    full = np.array([1.5, -2.0, 0.15625], np.float32)
    top = (full.view(np.uint32) >> 16).astype("<u2")
    np.testing.assert_array_equal(decode_layer(layer(params=top.tobytes(), encoding=3), "x"), full)


def test_unknown_layer_encoding_is_named():
    with pytest.raises(CheckpointError, match="encoding 9"):
        decode_layer(layer(params=b"\0\0", encoding=9), "input.weights")


# -- refusals -------------------------------------------------------------------------------------

def _net():
    net = net_class()()
    net.ParseFromString(gzip.decompress(require_shared_data(T1).read_bytes()))
    return net


def _bytes(net) -> bytes:
    return gzip.compress(net.SerializeToString(), compresslevel=1)


def _broken(change) -> bytes:
    net = _net()
    change(net)
    return _bytes(net)


@pytest.mark.parametrize("data, message", [
    (b"not a network at all", "not gzip or protobuf"),
    (gzip.compress(b"\xff" * 100), "not gzip or protobuf"),
    (b"\x1f\x8b\x08\x00garbage", "gzip"),
])
def test_not_gzip_or_not_protobuf(data, message):
    with pytest.raises(CheckpointError, match=message):
        parse_net(data)


def test_wrong_magic_and_newer_format():
    with pytest.raises(CheckpointError, match="magic is 0x1c1"):
        parse_net(_broken(lambda n: setattr(n, "magic", 0x1C1)))
    with pytest.raises(CheckpointError, match="needs lc0 0.40.0"):
        parse_net(_broken(lambda n: setattr(n.min_version, "minor", 40)))


def test_unknown_format_value_names_field_and_value():
    with pytest.raises(CheckpointError, match=r"NetworkFormat.input_embedding has value 7"):
        parse_net(_broken(lambda n: setattr(n.format.network_format, "input_embedding", 7)))
    with pytest.raises(CheckpointError, match=r"NetworkFormat.network has value 5"):
        parse_net(_broken(lambda n: setattr(n.format.network_format, "network", 5)))


def test_missing_and_mis_sized_weights():
    with pytest.raises(CheckpointError, match="missing weights encoder.1.mha.k_w"):
        from_lc0(parse_net(_broken(lambda n: n.weights.encoder[1].mha.ClearField("k_w"))))

    def truncate(n):
        n.weights.ip_mov_w.params = n.weights.ip_mov_w.params[:-2]
    with pytest.raises(CheckpointError, match="weights ip_mov_w hold"):
        from_lc0(parse_net(_broken(truncate)))


def test_bad_input_leaves_nothing_behind(tmp_path):
    bad = tmp_path / "bad.pb.gz"
    bad.write_bytes(_broken(lambda n: n.weights.encoder[0].ClearField("ln1_gammas")))
    out = tmp_path / "out.safetensors"
    with pytest.raises(CheckpointError, match="missing weights encoder.0.ln1_gammas"):
        convert(bad, out)
    assert list(tmp_path.iterdir()) == [bad]


def test_old_header_without_network_format_is_classical():
    net = net_class()()
    net.ParseFromString(gzip.decompress(require_shared_data(SE).read_bytes()))
    net.format.ClearField("network_format")
    fmt = parse_net(_bytes(net)).format.names()
    assert (fmt["input"], fmt["network"], fmt["policy"], fmt["value"]) == (
        "INPUT_CLASSICAL_112_PLANE", "NETWORK_CLASSICAL_WITH_HEADFORMAT", "POLICY_CLASSICAL", "VALUE_CLASSICAL")


# -- input formats --------------------------------------------------------------------------------

def test_v2_fen_with_clock_and_no_history_does_not_loop():
    board = chess.Board("8/8/4k3/8/2K5/8/8/7R b - - 37 80")
    for fmt in (5, 133):
        encoded = encode_position(board, fmt)
        assert encoded.bits[13:104].sum() == 0  # only the current position; nothing repeats
        assert encoded.rule50 == pytest.approx(0.37)
    assert encode_position(board, 133).bits[110] != 0  # Armageddon: black to move


def test_transformed_move_indices_match_a_transformed_board():
    """The policy index of a move in the canonical frame is that of the same move on the transformed board."""
    board = chess.Board("8/8/8/8/8/2k5/K7/3Q4 w - - 0 1")  # pawnless, no castling, king a2: flip + transpose
    transform = encode_position(board, 4).transform
    assert transform & FLIP and transform & TRANSPOSE
    moved = chess.Board(None)
    for square, piece in board.piece_map().items():
        moved.set_piece_at(apply_transform(chess.BB_SQUARES[square], transform).bit_length() - 1, piece)
    moves = list(board.legal_moves)
    expected = []
    for m in moves:
        f, t = (apply_transform(chess.BB_SQUARES[s], transform).bit_length() - 1 for s in (m.from_square,
                                                                                          m.to_square))
        expected.append(move_to_index(moved, chess.Move(f, t)))
    assert move_indices(board, moves, transform).tolist() == expected


def test_transform_bits_are_lc0s():
    d1 = chess.BB_SQUARES[chess.D1]
    assert apply_transform(d1, FLIP) == chess.BB_SQUARES[chess.E1]
    assert apply_transform(d1, MIRROR) == chess.BB_SQUARES[chess.D8]
    assert apply_transform(chess.BB_SQUARES[chess.E1], TRANSPOSE) == chess.BB_SQUARES[chess.H4]


# -- attention maps -------------------------------------------------------------------------------

def test_attention_maps_are_in_real_squares():
    """Format 4 has no side-to-move plane, so a board and its colour mirror look identical to the
    network; their real-square maps must then be mirror images of each other."""
    model = load_lc0(require_shared_data(T1))
    white = chess.Board("8/8/8/3k4/8/8/8/R3K3 w - - 0 1")  # no castling rights: canonical flip applies
    black = white.mirror()
    a, b = evaluate_boards(model, [white, black], attention=True)
    assert a.attention.shape == (2, 2, 64, 64)
    np.testing.assert_allclose(a.attention.sum(-1), 1, atol=1e-5)
    mirror = [chess.square_mirror(s) for s in range(64)]
    np.testing.assert_allclose(b.attention, a.attention[..., mirror, :][..., mirror], atol=1e-6)
    assert {m.uci() for m in a.policy} == {chess.Move(mirror[m.from_square], mirror[m.to_square]).uci()
                                          for m in b.policy}
    for m, p in b.policy.items():
        assert a.policy[chess.Move(mirror[m.from_square], mirror[m.to_square])] == pytest.approx(p, abs=1e-6)


@pytest.mark.parametrize("source", [T1, BT])
@pytest.mark.parametrize("fen, reflect", [
    ("8/8/4k3/8/2K5/8/8/7R w - - 0 80", chess.flip_horizontal),  # flip + transpose vs transpose alone
    ("8/8/4k3/8/2K5/8/8/7R w - - 0 80", chess.flip_diagonal),  # flip + transpose vs flip alone
    ("8/8/4k3/8/2K5/8/8/7R b - - 0 80", chess.flip_diagonal),  # none vs transpose, black to move
    ("r3k2r/pp3ppp/8/8/8/8/PP3PPP/R3K2R w - - 0 30", chess.flip_horizontal),  # pawns: none vs flip
])
def test_attention_maps_undo_the_canonical_transform(source, fen, reflect):
    """A board and its reflection have the same canonical planes, so the network computes the same
    maps in its frame; in real squares the second board's maps must be the first's, reflected. The
    colour-mirror test above cannot see a transform left undone (both of its boards get the same one)."""
    board = chess.Board(fen)
    reflected = board.transform(reflect)
    fmt = load_lc0(require_shared_data(source)).config.input_format
    first, second = encode_position(board, fmt), encode_position(reflected, fmt)
    assert first.transform != second.transform and (first.bits == second.bits).all()
    where = np.array([reflect(chess.BB_SQUARES[s]).bit_length() - 1 for s in range(64)])
    evaluator = resolve_evaluator(str(require_shared_data(source)))
    a, b = evaluator.evaluate([board, reflected], attention=True)
    np.testing.assert_allclose(b.attention[..., where[:, None], where[None, :]], a.attention, atol=1e-6)
    assert not np.allclose(a.attention, a.attention[..., where[:, None], where[None, :]], atol=1e-3)
    for move, p in a.policy.items():
        assert b.policy[chess.Move(where[move.from_square], where[move.to_square])] == pytest.approx(p, abs=1e-6)


# -- conversion -----------------------------------------------------------------------------------

@pytest.mark.parametrize("source", [SE, T1, BT])
def test_conversion_round_trip(tmp_path, source):
    path = require_shared_data(source)
    out = convert(path, tmp_path / "net.safetensors")
    model, meta = load_checkpoint(out)
    original = load_lc0(path)
    assert meta.family == original.family and meta.trained
    assert meta.provenance["sha256"] == read_net(path).sha256
    assert meta.provenance["format"]["input"].startswith("INPUT_")
    planes = torch.rand(3, 64, 112).round()
    with torch.no_grad():
        a, b = model(planes), original(planes)
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=0)


def test_float16_conversion_stays_within_tolerance(tmp_path):
    out = convert(require_shared_data(T1), tmp_path / "net.safetensors", float16=True)
    _, meta = load_checkpoint(out)
    assert meta.provenance["storage"] == "float16"
    assert meta.provenance["float16_max_output_difference"] <= 1e-3


def test_cli_import_and_refusal(tmp_path, capsys):
    out = tmp_path / "se.safetensors"
    assert main(["import-lc0", str(require_shared_data(SE)), "--out", str(out)]) == 0
    assert "lc0-resnet" in capsys.readouterr().out and out.is_file()
    junk = tmp_path / "junk.pb.gz"
    junk.write_bytes(struct.pack("<Q", 7) * 4)
    assert main(["import-lc0", str(junk), "--out", str(tmp_path / "junk.safetensors")]) == 2
    assert "not an lc0 network" in capsys.readouterr().err
    assert not (tmp_path / "junk.safetensors").exists()


def test_transpose_tie_break_on_the_diagonal():
    """lc0's planes for this FEN put our queen d1 on h4 (flip, then transpose by the tie-break)."""
    encoded = encode_position(chess.Board("6k1/8/8/8/8/8/8/K2Q4 w - - 0 1"), 4)
    assert encoded.transform == FLIP | TRANSPOSE
    assert int(encoded.bits[4]) == chess.BB_SQUARES[chess.H4]


def test_castling_en_passant_and_clock_planes_by_format():
    board = chess.Board("r3k2r/8/8/8/3pP3/8/8/R3K2R b Kq e3 0 20")
    board.halfmove_clock = 12
    two, three, four = (encode_position(board, f) for f in (2, 3, 4))
    # Black to move: our (black's) queenside rook a8 is a1 in our frame; white's kingside rook h1 is h8.
    assert int(two.bits[104]) == chess.BB_SQUARES[chess.A1] and int(two.bits[105]) == chess.BB_SQUARES[chess.H8]
    assert two.bits[106] == two.bits[107] == 0
    assert int(two.bits[108]) == 0xFFFF_FFFF_FFFF_FFFF and two.rule50 == 12  # side to move, raw clock
    assert int(three.bits[108]) == chess.BB_SQUARES[chess.E8] and three.rule50 == 12  # e-file en passant
    assert four.rule50 == pytest.approx(0.12) and three.transform == 0  # castling rights: no transform


def test_registry_helpers_agree_with_encoding():
    from analysis.encoding.lc0_formats import legal_moves, position_key, square_tokens

    board = chess.Board("8/8/8/8/8/2k5/K7/3Q4 w - - 3 60")
    moves, indices = legal_moves(board, 4)
    assert indices.tolist() == move_indices(board, moves, FLIP | TRANSPOSE).tolist()
    assert sorted(square_tokens(board, 4).tolist()) == list(range(64))
    assert position_key(board, 4) != position_key(board, 1)
    board.halfmove_clock = 4
    assert position_key(board, 4) != position_key(chess.Board("8/8/8/8/8/2k5/K7/3Q4 w - - 3 60"), 4)


def test_multi_head_nets_expose_every_head_and_default_to_vanilla_and_winner():
    """lc0's reference outputs are the default heads only (checked in test_lc0_reference.py); the
    others come out under their own names, from their own weights."""
    model = load_lc0(require_shared_data(BT))
    assert (model.config.policy_heads, model.config.value_heads) == (("vanilla", "optimistic_st"), ("winner", "q"))
    with torch.no_grad():
        out = model(torch.rand(4, 64, 112, generator=torch.Generator().manual_seed(0)).round())
    for key, head in (("policy", "vanilla"), ("wdl", "winner"), ("q", "winner"), ("d", "winner")):
        torch.testing.assert_close(out[key], out[f"{key}.{head}"], rtol=0, atol=0)
    assert not torch.allclose(out["policy.vanilla"], out["policy.optimistic_st"], atol=1e-3)
    assert not torch.allclose(out["wdl.winner"], out["wdl.q"], atol=1e-4)
    torch.testing.assert_close(out["wdl.q"].sum(-1), torch.ones(4))
    torch.testing.assert_close(out["q.q"], out["wdl.q"][:, 0] - out["wdl.q"][:, 2])


def test_every_activation_lc0_names_is_lc0s_formula():
    """The synthetic nets use only a few of them; the rest are checked against the formulas of
    lc0's activation.cc here (research note section 4.8)."""
    from analysis.models.lc0.activations import FUNCTIONS, Activation, resolve
    from analysis.models.lc0.convert.reader import ACTIVATIONS, DEFAULT_ACTIVATIONS

    x = torch.linspace(-6, 6, 241, dtype=torch.float64)
    expected = {
        "mish": x * torch.tanh(torch.log1p(torch.exp(x))), "relu": x.clamp(min=0), "none": x,
        "tanh": torch.tanh(x), "sigmoid": 1 / (1 + torch.exp(-x)),
        "selu": 1.05070098 * torch.where(x > 0, x, 1.67326324 * (torch.exp(x) - 1)),
        "swish": x / (1 + torch.exp(-x)), "relu_2": x.clamp(min=0) ** 2,
        "softmax": torch.exp(x) / torch.exp(x).sum(),
    }
    named = {name.lower() for name in ACTIVATIONS.values() if name != "DEFAULT"}
    assert named == set(FUNCTIONS) == set(expected)
    assert {name.lower() for name in DEFAULT_ACTIVATIONS.values()} <= named
    for name, values in expected.items():
        torch.testing.assert_close(Activation(name)(x), values, rtol=1e-12, atol=1e-12, msg=name)
    assert resolve("default", "mish") == "mish" and resolve("swish", "mish") == "swish"
    with pytest.raises(ValueError, match="unknown activation"):
        Activation("gelu")
