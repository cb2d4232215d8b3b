"""Checkpoints: bit-exact round trip, and one clear error per kind of bad file."""

import json
import struct

import chess
import pytest
import torch
from safetensors.torch import save_file

from analysis.checkpoint import CheckpointError, load_checkpoint, load_evaluator, read_header, save_checkpoint
from analysis.models.chessformer import PRESETS, Chessformer


@pytest.fixture()
def saved(tmp_path):
    torch.manual_seed(5)
    model = Chessformer(PRESETS["cf-tiny"])
    path = save_checkpoint(tmp_path / "net.safetensors", model, trained=True,
                           provenance={"data": "unit test", "steps": 3}, metrics={"puzzles": 0.5})
    return model, path


def test_round_trip_is_bit_exact(saved):
    model, path = saved
    loaded, meta = load_checkpoint(path)
    original = model.state_dict()
    for name, tensor in loaded.state_dict().items():
        assert torch.equal(tensor, original[name]), name
    assert meta.family == "chessformer" and meta.trained is True
    assert meta.config == PRESETS["cf-tiny"].to_dict()
    assert meta.provenance == {"data": "unit test", "steps": 3} and meta.metrics == {"puzzles": 0.5}
    assert meta.input_encoding == "lc0/INPUT_CLASSICAL_112_PLANE"
    tokens = torch.zeros(1, 64, 112)
    with torch.no_grad():
        assert torch.equal(model.eval()(tokens)["policy"], loaded(tokens)["policy"])


def test_untrained_flag_survives(tmp_path):
    path = save_checkpoint(tmp_path / "raw.safetensors", Chessformer(PRESETS["cf-tiny"]), trained=False)
    evaluator = load_evaluator(path, device="cpu")
    assert evaluator.trained is False and evaluator.meta.trained is False
    assert evaluator.evaluate([chess.Board()])[0].policy


def test_missing_file(tmp_path):
    with pytest.raises(CheckpointError, match="no such file"):
        load_checkpoint(tmp_path / "absent.safetensors")


def test_truncated_file(saved, tmp_path):
    _, path = saved
    data = path.read_bytes()
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes(data[: len(data) - 1000])
    with pytest.raises(CheckpointError, match="truncated"):
        load_checkpoint(cut)
    tiny = tmp_path / "tiny.safetensors"
    tiny.write_bytes(data[:5])
    with pytest.raises(CheckpointError, match="truncated"):
        load_checkpoint(tiny)


def test_damaged_header(saved, tmp_path):
    _, path = saved
    data = bytearray(path.read_bytes())
    data[10:20] = b"\xff" * 10  # inside the JSON header
    bad = tmp_path / "damaged.safetensors"
    bad.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="damaged"):
        load_checkpoint(bad)


@pytest.mark.parametrize("zipped", [True, False])
def test_pickled_file_is_refused_without_unpickling(tmp_path, zipped):
    path = tmp_path / "net.pt"
    torch.save(Chessformer(PRESETS["cf-tiny"]).state_dict(), path, _use_new_zipfile_serialization=zipped)
    with pytest.raises(CheckpointError, match="pickled"):
        load_checkpoint(path)


def test_wrong_family(saved):
    _, path = saved
    with pytest.raises(CheckpointError, match="expected 'giraffe'"):
        load_checkpoint(path, family="giraffe")


def rewrite(path, out, *, metadata=None, tensors=None):
    """Copy a checkpoint with some metadata or tensors replaced."""
    model, meta = load_checkpoint(path)
    header = meta.to_header() | (metadata or {})
    state = {k: v.contiguous() for k, v in model.state_dict().items()} | (tensors or {})
    save_file(state, str(out), metadata=header)
    return out


def test_unknown_family_in_metadata(saved, tmp_path):
    _, path = saved
    bad = rewrite(path, tmp_path / "x.safetensors", metadata={"family": "alphazero"})
    with pytest.raises(CheckpointError, match="unknown model family 'alphazero'"):
        load_checkpoint(bad)


def test_wrong_shape(saved, tmp_path):
    _, path = saved
    bad = rewrite(path, tmp_path / "shape.safetensors", tensors={"embed.weight": torch.zeros(32, 111)})
    with pytest.raises(CheckpointError, match=r"'embed.weight' has shape \[32, 111\], the config needs \[32, 112\]"):
        load_checkpoint(bad)


def test_config_mismatching_tensors(saved, tmp_path):
    _, path = saved
    config = dict(PRESETS["cf-tiny"].to_dict(), layers=3)
    bad = rewrite(path, tmp_path / "layers.safetensors", metadata={"config": json.dumps(config)})
    with pytest.raises(CheckpointError, match="missing layers.2"):
        load_checkpoint(bad)


def test_bad_config_values(saved, tmp_path):
    _, path = saved
    bad = rewrite(path, tmp_path / "cfg.safetensors", metadata={"config": json.dumps({"heads": 5, "embed": 32})})
    with pytest.raises(CheckpointError, match="bad chessformer config"):
        load_checkpoint(bad)


def test_foreign_safetensors_file(tmp_path):
    path = tmp_path / "foreign.safetensors"
    save_file({"w": torch.zeros(2)}, str(path))
    with pytest.raises(CheckpointError, match="not a Sightline checkpoint"):
        read_header(path)


def test_untrained_flag_must_be_explicit(saved, tmp_path):
    _, path = saved
    bad = rewrite(path, tmp_path / "flag.safetensors", metadata={"trained": "maybe"})
    with pytest.raises(CheckpointError, match="trained"):
        load_checkpoint(bad)


def test_header_length_beyond_file(tmp_path):
    path = tmp_path / "huge.safetensors"
    path.write_bytes(struct.pack("<Q", 10**9) + b"{}")
    with pytest.raises(CheckpointError, match="truncated"):
        load_checkpoint(path)


def test_save_is_atomic(tmp_path, monkeypatch):
    import safetensors.torch  # checkpoint_file imports it when it writes (reading a header needs no torch)

    def broken_save(tensors, filename, metadata):
        with open(filename, "wb") as f:
            f.write(b"half")
        raise OSError("disk full")

    monkeypatch.setattr(safetensors.torch, "save_file", broken_save)
    target = tmp_path / "net.safetensors"
    with pytest.raises(OSError):
        save_checkpoint(target, Chessformer(PRESETS["cf-tiny"]), trained=False)
    assert not target.exists() and list(tmp_path.iterdir()) == []


def write_raw(path, header: dict, data: bytes = b"") -> None:
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data)


@pytest.mark.parametrize("header, message", [
    ({"w": {"dtype": "F32", "shape": [1], "data_offsets": ["0", "4"]}}, "damaged entry for tensor 'w'"),
    ({"w": {"dtype": "F32", "shape": ["1"], "data_offsets": [0, 4]}}, "damaged entry for tensor 'w'"),
    ({"w": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}}, "damaged entry for tensor 'w'"),
    ({"w": [1, 2]}, "damaged entry for tensor 'w'"),
    ({"__metadata__": ["format"]}, "metadata must map names to strings"),
    ({"__metadata__": {"format": 1}}, "metadata must map names to strings"),
])
def test_malformed_header_entries(tmp_path, header, message):
    path = tmp_path / "bad.safetensors"
    write_raw(path, header, b"\0" * 4)
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(path)


@pytest.mark.parametrize("key, value, message", [
    ("config", "[1, 2]", "'config' must be a JSON object"),
    ("provenance", "[]", "'provenance' must be a JSON object"),
    ("config", json.dumps(dict(PRESETS["cf-tiny"].to_dict(), heads=0)), "heads must be a positive integer"),
    ("config", json.dumps(dict(PRESETS["cf-tiny"].to_dict(), layers=True)), "layers must be a positive integer"),
])
def test_bad_metadata_values(saved, tmp_path, key, value, message):
    _, path = saved
    bad = rewrite(path, tmp_path / "meta.safetensors", metadata={key: value})
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(bad)


def test_hostile_config_is_refused_before_allocating(saved, tmp_path):
    _, path = saved
    huge = dict(PRESETS["cf-tiny"].to_dict(), layers=60, embed=4096, heads=32, ffn=16384)
    bad = rewrite(path, tmp_path / "huge.safetensors", metadata={"config": json.dumps(huge)})
    with pytest.raises(CheckpointError, match="do not match"):
        load_checkpoint(bad)  # 12 billion parameters (48 GB) if built for real


def test_a_tiny_file_claiming_a_thousand_layers_is_refused_before_anything_is_built(tmp_path, monkeypatch):
    # Once held an admin request for 9.8 s while 1,000 layers were built on the meta device.
    metadata = {"format": "sightline-checkpoint", "format_version": "1", "family": "chessformer",
                "input_encoding": "lc0/INPUT_CLASSICAL_112_PLANE", "trained": "true",
                "config": json.dumps(dict(PRESETS["cf-tiny"].to_dict(), layers=1000))}
    header = json.dumps({"__metadata__": metadata}).encode()
    path = tmp_path / "deep.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header)
    assert path.stat().st_size < 500

    def no_building(*args, **kwargs):
        raise AssertionError("a module was built for a config over the limits")

    monkeypatch.setattr(Chessformer, "__init__", no_building)
    with pytest.raises(CheckpointError, match="bad chessformer config: layers 1000 is over the limit of 64"):
        load_checkpoint(path)
